//! The console observer: a progress bar with ETA on a terminal (nothing of it
//! otherwise), and one line on stderr for every case that failed (and, with -v,
//! every case that ended or was refused: the tables name refusals' reasons).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ipcperf_core::observer::Observer;
use ipcperf_core::plan::CaseSpec;
use ipcperf_core::record::{CaseRecord, CaseStatus};

use crate::units::fmt_size;

/// How much goes to stderr: -1 quiet (`-q`: results only), 0 normal, 1 verbose
/// (`-v`: every case as it ends).
static VERBOSITY: std::sync::atomic::AtomicI8 = std::sync::atomic::AtomicI8::new(0);

pub fn set_verbosity(v: i8) {
    VERBOSITY.store(v, std::sync::atomic::Ordering::Relaxed);
}

fn verbosity() -> i8 {
    VERBOSITY.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether `-q` asked for the results alone (no banner above the tables).
pub fn quiet() -> bool {
    verbosity() < 0
}

/// Whether `-v` asked for every case's own lines (tables then note each noisy
/// case on a line of its own, not one line for the table).
pub fn verbose() -> bool {
    verbosity() > 0
}

/// `--color`: 0 auto, 1 always, 2 never.
static COLOR: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// `--color auto|always|never` (anything else: auto).
pub fn set_color(when: &str) {
    let v = match when {
        "always" => 1,
        "never" => 2,
        _ => 0,
    };
    COLOR.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// Whether tables draw Unicode boxes (on a terminal) or ASCII lines (into a pipe
/// or a file, where `|`, `-` and `+` survive every viewer and `cut -d'|'`).
/// The binary sets it from standard output at start; the library's default is
/// boxes.
static BOXES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Draw tables with Unicode boxes (`true`) or ASCII lines (`false`).
pub fn set_boxes(on: bool) {
    BOXES.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// The style every console table loads: see [`set_boxes`].
pub fn table_style() -> comfy_table::TableStyle {
    if BOXES.load(std::sync::atomic::Ordering::Relaxed) {
        comfy_table::presets::UTF8_FULL_CONDENSED
    } else {
        comfy_table::presets::ASCII_FULL_CONDENSED
    }
}

/// `text` in an ANSI colour (31 red, 32 green, 33 yellow): with `--color always`;
/// never with `--color never`; by default when stderr is a terminal and
/// `NO_COLOR` is not set (https://no-color.org). Plain otherwise.
pub fn paint(text: &str, colour: u8) -> String {
    let on = match COLOR.load(std::sync::atomic::Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    if on {
        format!("\x1b[{colour}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// Notes and warnings held back while a measuring command checks its input.
static HELD: std::sync::Mutex<Option<Vec<String>>> = std::sync::Mutex::new(None);

fn held() -> std::sync::MutexGuard<'static, Option<Vec<String>>> {
    HELD.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Hold back notes and warnings until [`release`]: input that turns out bad
/// after the plan was made is then one line, the error, without the plan's
/// notes above it.
pub fn hold() {
    *held() = Some(Vec::new());
}

/// Print what was held, in order, and stop holding.
pub fn release() {
    for line in held().take().unwrap_or_default() {
        err_raw(&format!("{line}\n"));
    }
}

/// Forget what was held (the command ended in bad input: its error is the line).
pub fn forget_held() {
    held().take();
}

fn say(line: String) {
    match held().as_mut() {
        Some(v) => v.push(line),
        None => err_raw(&format!("{line}\n")),
    }
}

/// `text` with its control characters (but newline and tab) written as
/// escapes: a path or name the user gave (`--token-file $'t\e[31mk'`) is shown,
/// never obeyed by the terminal (a carriage return wrote the rest of a line
/// over its start; an escape sequence coloured or cleared the screen).
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A line of information on stderr (none with `-q`).
pub fn note(text: &str) {
    if verbosity() >= 0 {
        say(for_stderr(format!("ipcperf: {}", printable(text))));
    }
}

/// [`note`], said once a process: a plan made in parts (advise's, one part per
/// size rule) said "placement classes this machine does not have" for each.
pub fn note_once(text: &str) {
    static SAID: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let first = SAID.lock().map_or(true, |mut s| s.insert(text.to_string()));
    if first {
        note(text);
    }
}

/// A warning line on stderr (none with `-q`).
pub fn warn(text: &str) {
    if verbosity() >= 0 {
        say(for_stderr(format!(
            "ipcperf: {} {}",
            paint("warning:", 33),
            printable(text)
        )));
    }
}

/// A warning printed whatever the verbosity: where the user's data went when
/// it could not go where it should (`-q` quiets notes, never this).
pub fn warn_always(text: &str) {
    say(for_stderr(format!(
        "ipcperf: {} {}",
        paint("warning:", 33),
        printable(text)
    )));
}

/// Wrapping at spaces only: no word is broken, not even at a hyphen.
pub fn wrap_opts(width: usize) -> textwrap::Options<'static> {
    textwrap::Options::new(width)
        .break_words(false)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
}

/// `line` wrapped at words to `cols` columns, its lines after the first
/// indented by `indent`. No word is broken, and a figure stays with its unit
/// ("512 B", "63.2 µs"): the space between them is held while it is wrapped.
/// Colour codes take no width.
pub fn fill(line: &str, cols: usize, indent: &str) -> String {
    const UNITS: &[&str] = &["B", "KiB", "MiB", "GiB", "ns", "µs", "ms", "s", "MB/s"];
    let words: Vec<&str> = line.split(' ').collect();
    let mut held = String::with_capacity(line.len());
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            let figure = words[i - 1].ends_with(|c: char| c.is_ascii_digit());
            let unit = UNITS
                .iter()
                .any(|u| w.trim_end_matches([',', ';', ':', ')', '.']) == *u);
            held.push(if figure && unit { '\u{a0}' } else { ' ' });
        }
        held.push_str(w);
    }
    let opts = wrap_opts(cols).subsequent_indent(indent);
    textwrap::fill(&held, opts).replace('\u{a0}', " ")
}

/// A line of prose for standard output: on a terminal, wrapped at words to its
/// width, its further lines indented as far as its own start and `more` beyond;
/// elsewhere as it is (one line, for grep).
pub fn fit_line(line: &str, more: usize) -> String {
    let Some(w) = terminal_width() else {
        return line.to_string();
    };
    let text = line.trim_start_matches(' ');
    let lead = " ".repeat(line.len() - text.len());
    let cols = usize::from(w).saturating_sub(lead.len()).max(10);
    fill(text, cols, &" ".repeat(more))
        .lines()
        .map(|l| format!("{lead}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The width of the terminal standard error is (None for a pipe or a file:
/// those get each message as one line, for grep and logs).
fn stderr_width() -> Option<usize> {
    let e = std::io::stderr();
    if !e.is_terminal() {
        return None;
    }
    terminal_size::terminal_size_of(&e)
        .map(|(w, _)| usize::from(w.0))
        .filter(|&w| w >= 20)
}

/// A message for standard error: on a terminal, wrapped at words to its width
/// under a hanging indent; elsewhere one line.
fn for_stderr(line: String) -> String {
    match stderr_width() {
        Some(w) => fill(&line, w, "    "),
        None => line,
    }
}

/// The terminal's width when standard output is one (None for a pipe or a file:
/// those get every column at full width).
pub fn terminal_width() -> Option<u16> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    terminal_size::terminal_size()
        .map(|(w, _)| w.0)
        .filter(|&w| w >= 20)
}

/// Make a table fit the terminal: cells wrap when the table would be wider.
pub fn fit(t: &mut comfy_table::Table) {
    if let Some(w) = terminal_width() {
        t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
            .set_width(w);
    }
}

/// How a measuring command ends when standard output fails (set by the binary):
/// as an interruption, its objects removed and its run marked stopped, given
/// what to say and the exit code; not as a plain exit that left the run
/// looking killed or still running.
static STDOUT_FAILED: std::sync::OnceLock<fn(&str, i32) -> !> = std::sync::OnceLock::new();

/// Set how [`out`] ends the process when standard output fails.
pub fn on_stdout_failed(end: fn(&str, i32) -> !) {
    let _ = STDOUT_FAILED.set(end);
}

/// Write `text` to standard output. A reader that went away (`ipcperf list | head
/// -2`) ends the command quietly (exit 0; a measuring command as
/// [`on_stdout_failed`] says), instead of a panic; any other
/// error writing is reported once and ends it with exit code 1.
///
/// Control characters in it are written as escapes ([`printable`]), as on
/// standard error: a host name or label in a shared history (PostgreSQL rows
/// are not imports, and no import check read them) reached the terminal raw
/// through `history`'s table and CSV. What ipcperf writes itself holds none
/// (JSON escapes them).
pub fn out(text: &str) {
    use std::io::Write;
    let text = printable(text);
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        drop(o);
        let gone = e.kind() == std::io::ErrorKind::BrokenPipe;
        let (why, code) = if gone {
            ("standard output's reader went away".to_string(), 141)
        } else {
            (format!("error: cannot write to standard output: {e}"), 1)
        };
        if let Some(end) = STDOUT_FAILED.get() {
            end(&why, code);
        }
        if gone {
            std::process::exit(0);
        }
        crate::errln!("ipcperf: {why}");
        std::process::exit(1);
    }
}

/// Write a command's result to standard output and say whether it arrived: a
/// reader that went away (`| head`) took what it wanted (Ok); any other error
/// (a full disk under `> file`) is the caller's to say, never passed over as
/// success.
pub fn out_result(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let text = printable(text);
    let mut o = std::io::stdout().lock();
    match o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// Write `text` to standard error; a write that fails (a reader that went away,
/// as in `ipcperf run 2>&1 | head -1`, or a closed stderr) loses the text, never
/// the run: std's `eprintln!` panics there, and the panic's own message then
/// failed too, which aborted the process (exit 134) with its named objects left.
///
/// Control characters in it are written as escapes ([`printable`]): every line
/// on standard error may hold a path, a name or an OS's message.
pub fn err_text(text: &str) {
    err_raw(&printable(text));
}

/// [`err_text`] as it is, control characters and all: only for a line whose
/// every part from outside (a path, a name, an OS's message) already passed
/// through [`printable`]: the colours [`paint`] gave it, a progress line drawn
/// with `\r` and erase to end of line.
pub fn err_raw(text: &str) {
    use std::io::Write;
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(text.as_bytes()).and_then(|()| e.flush());
}

/// `eprintln!` that never panics ([`err_text`]); takes `format!` arguments.
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => {
        $crate::console::err_text(&format!("{}\n", format_args!($($t)*)))
    };
}

/// [`out`] with a newline; takes `format!` arguments.
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::console::out(&format!("{}\n", format_args!($($t)*)))
    };
}

/// What a command prints as cases end (a table whose last case just finished).
pub type Streamer = Box<dyn FnMut(&CaseRecord) -> Option<String>>;

pub struct Console {
    bar: Option<ProgressBar>,
    streamer: Option<Streamer>,
    /// The runner reports steps ([`Observer::progress`]): the bar follows them.
    stepped: bool,
}

/// A short name for a case: `pipe processes 64 KiB same-cpu 0→0` (a sync case
/// has no block size: `futex threads shared-l3 0→1`).
pub fn case_name(r: &CaseRecord) -> String {
    if r.workload == ipcperf_core::kind::Workload::Sync {
        return format!("{} {} {}", r.mechanism, r.mode.name(), r.placement.shown());
    }
    format!(
        "{} {} {} {}",
        r.mechanism,
        r.mode.name(),
        fmt_size(r.block_size),
        r.placement.shown()
    )
}

/// The bar's look, counting `what` (cases, or series taken in rounds).
fn bar_style(what: &str) -> ProgressStyle {
    ProgressStyle::with_template(&format!(
        "{{spinner}} [{{elapsed}}] {{bar:20}} {{pos}}/{{len}} {what}, ETA {{eta}}  {{wide_msg}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl Console {
    /// Progress over `total` cases (a bar on a terminal, nothing otherwise).
    pub fn new(total: usize) -> Console {
        let bar = (std::io::stderr().is_terminal() && verbosity() >= 0).then(|| {
            let b = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            b.set_style(bar_style("cases"));
            b
        });
        Console {
            bar,
            streamer: None,
            stepped: false,
        }
    }

    /// Print what `f` makes of each case as it ends (on standard output, the
    /// progress bar put aside meanwhile).
    pub fn stream_with(&mut self, f: Streamer) {
        self.streamer = Some(f);
    }

    fn say(&self, line: String) {
        if verbosity() < 0 {
            return;
        }
        self.say_always(line);
    }

    /// A line even under `-q`: a failure is an error, not chatter.
    /// `line`'s parts from outside are the caller's to pass through [`printable`].
    fn say_always(&self, line: String) {
        let line = for_stderr(line);
        match &self.bar {
            Some(b) => b.println(line),
            None => err_raw(&format!("{line}\n")),
        }
    }

    /// A note (`ipcperf: ...`) above the bar; none under `-q`.
    pub fn note(&self, text: &str) {
        self.say(format!("ipcperf: {}", printable(text)));
    }

    /// A case starts: its name goes beside the bar.
    pub fn started(&self, name: String) {
        if let Some(b) = &self.bar {
            b.set_message(name);
        }
    }

    /// A case ended: a refusal or failure is said, the bar moves on, and what the
    /// command streams is printed.
    pub fn done(&mut self, r: &CaseRecord) {
        let msg = printable(r.message.as_deref().unwrap_or_default());
        match r.status {
            CaseStatus::Ok if verbosity() > 0 => {
                self.say(format!("ipcperf: done {}", case_name(r)))
            }
            CaseStatus::Ok => {}
            // A refusal's reason is in the table's notes: said here only with -v.
            CaseStatus::Refused if verbosity() > 0 => {
                self.say(format!("ipcperf: skipped {}: {msg}", case_name(r)))
            }
            CaseStatus::Refused => {}
            // Its objects removed by Ctrl-C's clean-up: the interruption is
            // said, not a "FAILED … Identifier removed" after it.
            CaseStatus::Failed if ipcperf_core::interrupted() => {}
            CaseStatus::Failed => self.say_always(format!(
                "ipcperf: {} {}: {msg}",
                paint("FAILED", 31),
                case_name(r)
            )),
        }
        if let Some(b) = self.bar.as_ref().filter(|_| !self.stepped) {
            b.inc(1);
        }
        if let Some(text) = self.streamer.as_mut().and_then(|f| f(r)) {
            match &self.bar {
                Some(b) => b.suspend(|| out(&text)),
                None => out(&text),
            }
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Observer for Console {
    fn case_started(&mut self, spec: &CaseSpec, _index: usize, _total: usize) {
        self.started(format!(
            "{} {} {} {}",
            spec.mechanism.name(),
            spec.mode.name(),
            fmt_size(spec.block_size as u64),
            spec.placement_label()
        ));
    }

    fn case_done(&mut self, r: &CaseRecord) {
        self.done(r);
    }

    /// Series in rounds: the bar counts steps (a case's series in one round)
    /// instead of cases.
    fn progress(&mut self, done: usize, total: usize) {
        if let (Some(b), false) = (&self.bar, self.stepped) {
            // It counts series now (240 of the default suite's 48 cases).
            b.set_style(bar_style("series"));
        }
        self.stepped = true;
        if let Some(b) = &self.bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    }
}

/// Say, once before a measuring run, what about this machine can distort its figures.
pub fn machine_warnings(m: &ipcperf_core::machine::Machine) {
    // Every input check is behind: the plan's notes are the run's now.
    release();
    if let Some(state) = &m.state {
        for w in state.warnings() {
            warn(&w);
        }
    }
}
