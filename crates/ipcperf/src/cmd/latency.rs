//! `ipcperf latency`: round-trip latency percentiles, mechanism by mechanism.

use ipcperf_core::record::RunRecord;
use ipcperf_core::runner;

use crate::console::Console;
use crate::export;
use crate::export::Format;
use crate::fail::Fail;
use crate::shared::round_trip::LatencyArgs;

pub fn run(a: LatencyArgs) -> Result<i32, Fail> {
    let (specs, hogs, env) = crate::shared::round_trip::prepare(&a)?;
    let mut run = RunRecord::begin("latency", std::env::args().collect());
    let mut saver = crate::shared::db::Saver::start(&a.save, &mut run)?;
    // After every input check: bad input is one line.
    crate::console::machine_warnings(&run.machine);
    let mut console = Console::new(specs.len());
    // Tables: where each mechanism has several cases (sizes, modes, rates), one
    // per mechanism, printed as soon as its last case has ended; the closing
    // print adds the rest. One case each: one table, a row per mechanism.
    let streamed = std::rc::Rc::new(std::cell::Cell::new(false));
    let mechs: Vec<_> = specs
        .iter()
        .map(|s| s.mechanism.name().to_string())
        .collect();
    let groups = 1 + mechs.windows(2).filter(|w| w[0] != w[1]).count();
    if a.format == Format::Table && groups > 1 && mechs.len() > groups {
        let half = a.half_rtt;
        console.stream_with(crate::shared::ending::group_streamer(
            &run,
            mechs,
            |c| c.mechanism.clone(),
            move |r, first| {
                let mut v = export::latency::build(r, half);
                v.tables.truncate(1);
                if !first {
                    v.heading.clear();
                }
                export::table::render(&v)
            },
            streamed.clone(),
        ));
    }
    run.cases = runner::run_all_latency(&specs, &env, &mut saver.observe(&mut console));
    // The server (`serve --once`) hears that the run is over; best effort.
    if let Some(r) = &env.remote {
        let _ = r.say_over();
    }
    drop(hogs);
    crate::shared::ending::finish(
        run,
        saver,
        &mut console,
        |r| {
            if !streamed.get() {
                // Half of each round trip is shown only when asked, so not by show.
                if a.half_rtt {
                    return export::render_latency(r, a.format, true);
                }
                return crate::document::document(r, a.format, None);
            }
            // The rest: the many-pairs table, if any.
            let mut v = export::latency::build(r, a.half_rtt);
            v.heading.clear();
            v.tables
                .retain(|t| !t.title.starts_with("Round-trip latency"));
            export::table::render(&v)
        },
        true,
    )
}
