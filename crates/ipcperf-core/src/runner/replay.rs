//! Running replay cases: a script over one mechanism, `series` passes on one
//! set-up, put together into the case's record (see [`crate::workload::replay`]).

use super::{fail_record, keep};
use crate::error::{Error, Result};
use crate::kind::Workload;
use crate::latency;
use crate::mechanism::{with_mechanism, Mechanism};
use crate::observer::Observer;
use crate::plan::{CaseSpec, RunEnv};
use crate::record::{BehindRecord, CaseRecord, ReplayRecord, TimelineBin};
use crate::workload::replay::{Figures, Script};
use crate::workload::replay_session::ReplaySession;
use crate::workload::stream_session::SeriesOutcome;

/// What to replay and how.
pub struct ReplayPlan<'a> {
    pub script: &'a Script,
    /// Passes (series) per mechanism.
    pub series: u32,
    /// Times round the script in a pass (`--loop`).
    pub reps: u64,
    /// Spin to each send time (`--busy-poll`).
    pub spin: bool,
    /// What the record says of the pattern (its figures are filled in here).
    pub about: ReplayRecord,
}

impl ReplayPlan<'_> {
    /// What one pass spans: the script's, and its loops after the first for `--loop`
    /// (each a period after the last). Saturates; [`ReplayPlan::check`] bounds it.
    pub fn pass_ns(&self) -> u64 {
        self.reps
            .saturating_sub(1)
            .saturating_mul(self.script.period_ns())
            .saturating_add(self.script.span_ns())
    }

    /// About how long `cases` cases take, said before they start: each pass, 50 ms
    /// between passes, 0.3 s to set up a case (peers, objects, warm-up).
    pub fn about_secs(&self, cases: usize) -> f64 {
        ((self.pass_ns() as f64 / 1e9 + 0.05) * f64::from(self.series) + 0.3) * cases as f64
    }

    /// The most messages a series holds.
    pub fn check(&self) -> Result<()> {
        let total = (self.script.len() as u64).checked_mul(self.reps);
        if self.reps == 0 || total.is_none_or(|t| t > crate::workload::replay::MAX_STEPS) {
            return Err(Error::Invalid(format!(
                "{} messages × {} loops: a pass holds at most {} messages",
                self.script.len(),
                self.reps,
                crate::workload::replay::MAX_STEPS
            )));
        }
        let length = (self.reps - 1)
            .checked_mul(self.script.period_ns())
            .and_then(|l| l.checked_add(self.script.span_ns()));
        if length.is_none_or(|l| l > crate::workload::replay::MAX_SPAN_NS) {
            return Err(Error::Invalid(format!(
                "{} loops of {} s: a pass lasts at most 30 days",
                self.reps,
                self.script.period_ns() / 1_000_000_000
            )));
        }
        if self.series == 0 {
            return Err(Error::Invalid("--series 0".into()));
        }
        Ok(())
    }
}

/// Run one replay case. Never fails: a refusal or failure is recorded with its reason.
pub fn run_replay_case(
    spec: &CaseSpec,
    plan: &ReplayPlan,
    env: &RunEnv,
    obs: &mut dyn Observer,
) -> CaseRecord {
    let mut rec = CaseRecord::for_spec(spec);
    rec.workload = Workload::Replay;
    let r = with_mechanism!(spec.mechanism, M => run_inner::<M>(spec, plan, env, obs, &mut rec));
    match r {
        Ok(()) => rec.summarize(),
        Err(e) => fail_record(&mut rec, e),
    }
    obs.case_done(&rec);
    rec
}

fn run_inner<M: Mechanism>(
    spec: &CaseSpec,
    plan: &ReplayPlan,
    env: &RunEnv,
    obs: &mut dyn Observer,
    rec: &mut CaseRecord,
) -> Result<()> {
    plan.check()?;
    crate::crossing::check(
        M::INFO.kind,
        spec.mode == crate::mode::Mode::Processes,
        &spec.opts.across,
        spec.opts.across_probe,
    )?;
    let script = plan.script;
    let pairs_answers = matches!(M::INFO.name, "udp" | "zmq-ipc" | "zmq-tcp" | "grpc-uds")
        || (M::INFO.name == "iceoryx2" && spec.opts.iox2_request_response);
    if pairs_answers && !script.alternates() {
        return Err(Error::Refused(format!(
            "{} pairs each answer with its request: it carries a pattern of one answer per \
             request, and this one is not",
            M::INFO.name
        )));
    }
    let mut s = ReplaySession::<M>::open(spec, env, script)?;
    rec.options.extend(s.facts());
    let tare = s.clock_cost_ns();
    let period = script.period_ns();
    let mut fig = Figures::new(plan.pass_ns() + 1);
    let mut about = plan.about.clone();
    let (mut series_p50, mut series_p99, mut elapsed) = (Vec::new(), Vec::new(), 0u64);
    for _ in 0..plan.series {
        // A pass that held a stop (Ctrl-Z) is taken again: its figures are the
        // whole pass's, the stop would be in its timeline as lateness.
        let p = crate::stop::unstopped(&mut rec.options, || {
            s.pass(plan.reps, period, plan.spin, env.stall_ns)
        })
        .map_err(|e| match e {
            Error::Timeout(m) => Error::Timeout(format!(
                "the replay fell too far behind its schedule (twice its recorded length \
                     and {} s more): {m}",
                env.stall_ns / 1_000_000_000
            )),
            e => e,
        })?;
        let (a, b) = s.times();
        let pass = fig.add(&script.steps, &p.timing, a, b, tare);
        let outcome = SeriesOutcome {
            start_ns: p.timing.start_ns,
            elapsed_ns: pass.elapsed_ns,
            writer_cpu: p.owner_cpu,
            reader_cpu: p.peer_cpu,
            writer_cpu_ns: p.owner_cpu_ns,
            reader_cpu_ns: Some(p.peer_cpu_ns),
            writer_counts: Some(p.owner_counts),
            reader_counts: p.peer_counts,
            delivered_bytes: Some(pass.bytes),
            ..Default::default()
        };
        keep(rec, spec, pass.delivered, outcome, obs);
        // Messages, not blocks of one size.
        if let Some(last) = rec.series.last_mut() {
            last.blocks = pass.delivered;
        }
        series_p50.push(pass.p50_ns);
        series_p99.push(pass.p99_ns);
        elapsed += pass.elapsed_ns;
        if let Some(k) = pass.kept {
            about.kept.push(k);
        }
    }
    s.close()?;
    if fig.all.is_empty() {
        return Err(Error::Peer(format!(
            "no message arrived ({} lost)",
            fig.lost
        )));
    }
    let mut summary = latency::summarize(
        &fig.all,
        elapsed,
        fig.lost,
        tare,
        series_p50,
        fig.over_range,
    );
    summary.series_p99_ns = series_p99;
    rec.latency = Some(summary);
    about.late_sends = fig.late_sends;
    about.late_p99_ns = fig.late.value_at_quantile(0.99);
    about.late_max_ns = fig.late.max();
    about.behind = fig.behind.map(|b| BehindRecord {
        from_ns: b.from_ns,
        to_ns: b.to_ns,
        messages: b.messages,
        max_late_ns: b.max_late_ns,
    });
    about.a_to_b_latency = Figures::way(&fig.a_to_b);
    about.b_to_a_latency = Figures::way(&fig.b_to_a);
    about.loops = plan.reps;
    about.recorded_ns = plan.pass_ns();
    let (a, ab, b, bb) = script.counts();
    (
        about.a_to_b,
        about.a_to_b_bytes,
        about.b_to_a,
        about.b_to_a_bytes,
    ) = (a, ab, b, bb);
    about.largest_bytes = script.largest() as u64;
    about.timeline = fig
        .bins
        .iter()
        .map(|b| TimelineBin {
            from_ns: b.from_ns,
            to_ns: b.to_ns,
            messages: b.latency.len(),
            p50_ns: b.latency.value_at_quantile(0.5),
            p99_ns: b.latency.value_at_quantile(0.99),
            max_ns: b.latency.max(),
            late: b.late,
        })
        .collect();
    rec.replay = Some(Box::new(about));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::{MechOptions, MechanismKind};
    use crate::mode::Mode;
    use crate::payload::Payload;

    fn spec(m: MechanismKind, mode: Mode, script: &Script) -> CaseSpec {
        CaseSpec {
            payload: Payload::Verify,
            opts: MechOptions {
                shm_messages: true,
                ..MechOptions::default()
            },
            ..CaseSpec::new(m, mode, script.largest(), crate::kind::Placement::UNPINNED)
        }
    }

    /// Requests of 100 B every 500 µs answered 100 µs later by 1,000 B.
    fn script() -> Script {
        let mut m = Vec::new();
        for i in 0..200u64 {
            m.push((i * 500_000, true, 100));
            m.push((i * 500_000 + 100_000, false, 1_000));
        }
        Script::new(m, 1.0).unwrap()
    }

    /// A pass of three loops spans two periods and the script once more; the
    /// estimate said before a replay counts every pass of every case and their
    /// set-up.
    #[test]
    fn a_pass_spans_its_loops_and_the_estimate_counts_every_pass() {
        let s = script();
        // 199 × 500 µs + 100 µs, and a period of that plus one mean gap.
        assert_eq!(s.span_ns(), 99_600_000);
        assert_eq!(s.period_ns(), 99_600_000 + 99_600_000 / 399);
        let mut plan = ReplayPlan {
            script: &s,
            series: 5,
            reps: 1,
            spin: false,
            about: ReplayRecord::default(),
        };
        assert_eq!(plan.pass_ns(), s.span_ns());
        plan.reps = 3;
        assert_eq!(plan.pass_ns(), 2 * s.period_ns() + s.span_ns());
        let one = (plan.pass_ns() as f64 / 1e9 + 0.05) * 5.0 + 0.3;
        assert!((plan.about_secs(4) - 4.0 * one).abs() < 1e-9);
        plan.reps = u64::MAX;
        assert_eq!(plan.pass_ns(), u64::MAX, "saturates; check() refuses it");
        assert!(plan.check().is_err());
    }

    #[test]
    fn every_message_of_a_replay_arrives_verified_over_each_kind_of_end() {
        let s = script();
        // A byte stream, a pair of one-way objects, messages and a ring.
        for m in [
            MechanismKind::Unix,
            MechanismKind::Pipe,
            MechanismKind::PosixMq,
            MechanismKind::Shm,
        ] {
            let plan = ReplayPlan {
                script: &s,
                series: 2,
                reps: 1,
                spin: false,
                about: ReplayRecord::default(),
            };
            let env = RunEnv::new(crate::kind::PeerCommand::current_exe().unwrap());
            let rec = run_replay_case(
                &spec(m, Mode::Threads, &s),
                &plan,
                &env,
                &mut crate::observer::Quiet,
            );
            assert!(rec.is_ok(), "{}: {:?}", m.name(), rec.message);
            let l = rec.latency.as_ref().unwrap();
            assert_eq!(l.round_trips, 800, "{}", m.name());
            assert_eq!(rec.series.len(), 2);
            assert_eq!(rec.series[0].bytes, 200 * 1_100);
            let r = rec.replay.as_ref().unwrap();
            assert_eq!((r.a_to_b, r.b_to_a), (200, 200));
            assert_eq!(r.kept.len(), 2);
            assert_eq!(r.timeline.iter().map(|b| b.messages).sum::<u64>(), 800);
            assert!(r.a_to_b_latency.is_some() && r.b_to_a_latency.is_some());
        }
    }
}
