//! `ipcperf run`: stream throughput against block size.

use ipcperf_core::plan::CaseSpec;
use ipcperf_core::record::RunRecord;
use ipcperf_core::runner;

use crate::console::Console;
use crate::export::{self, Format};
use crate::fail::Fail;
use crate::shared::db::Saver;
use crate::shared::ending::finish;
use crate::shared::stream::RunArgs;

pub fn run(a: RunArgs) -> Result<i32, Fail> {
    let (specs, hogs, env) = crate::shared::stream::prepare(&a)?;
    crate::shared::stream::check_rank_size(a.rank_size, specs.iter().map(|s| s.block_size as u64))?;
    let mut run = RunRecord::begin("run", std::env::args().collect());
    let mut saver = Saver::start(&a.save, &mut run)?;
    // After every input check: bad input is one line.
    crate::console::machine_warnings(&run.machine);
    let mut console = Console::new(specs.len());
    // Tables: each is printed as soon as its last case has finished.
    let printed = std::rc::Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    if a.format == Format::Table {
        console.stream_with(stream_tables(&run, &specs, printed.clone()));
    }
    run.cases = runner::run_all(&specs, &env, &mut saver.observe(&mut console));
    // The server (`serve --once`) hears that the run is over; best effort.
    if let Some(r) = &env.remote {
        let _ = r.say_over();
    }
    drop(hogs);
    finish(
        run,
        saver,
        &mut console,
        |r| {
            let done = printed.borrow();
            if done.is_empty() {
                return crate::document::document(r, a.format, a.rank_size);
            }
            // The rest: the ranking and the tables no case group made yet.
            let mut v = export::view::build(r, a.rank_size);
            v.heading.clear();
            v.tables.retain(|t| !done.contains(&t.title));
            export::table::render(&v)
        },
        true,
    )
}

/// The streamer of `run`'s tables: the run's heading before the first, then a
/// group's table (a mechanism, mode, payload and wait) as soon as its last case
/// has ended (a group's cases run one after another). The titles printed go
/// into `printed`, so the closing print leaves them out.
fn stream_tables(
    run: &RunRecord,
    specs: &[CaseSpec],
    printed: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
) -> crate::console::Streamer {
    use ipcperf_core::workload::Workload;
    let heading = export::view::heading(run);
    let next_groups: Vec<_> = specs
        .iter()
        .map(|s| export::view::group_of(&ipcperf_core::record::CaseRecord::for_spec(s)))
        .collect();
    let mut head = run.clone();
    head.cases.clear();
    let mut seen = 0usize;
    Box::new(move |r| {
        seen += 1;
        if r.workload != Workload::Stream {
            return None;
        }
        head.cases.push(r.clone());
        // The next case in the plan starts another group (or there is none).
        if next_groups.get(seen) == Some(&export::view::group_of(r)) {
            return None;
        }
        let tables = export::view::group_tables(&head);
        head.cases.clear();
        let mut done = printed.borrow_mut();
        let mut text = String::new();
        if done.is_empty() {
            text.push_str(&format!("{heading}\n"));
        }
        let fresh: Vec<_> = tables
            .into_iter()
            .filter(|t| !done.contains(&t.title))
            .collect();
        done.extend(fresh.iter().map(|t| t.title.clone()));
        text.push_str(&export::table::render_tables(&fresh));
        Some(text)
    })
}
