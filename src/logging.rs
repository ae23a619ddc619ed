//! Log output: every line the binaries log is one bounded line
//! ([`fleet_core::render::safe::bounded_log_line`]), whatever a site or a
//! server put into it.

use fleet_core::render::safe::bounded_log_line;

/// A `tracing_subscriber` writer that writes each log line bounded by
/// [`bounded_log_line`] to what `open` returns (stderr in both binaries):
/// tracing-subscriber formats one event and writes it in one go, and this
/// writer writes it out, bounded, when the event is done.
#[derive(Clone, Copy, Debug)]
pub struct BoundedLogLines<F> {
    open: F,
    json: bool,
}

impl<F> BoundedLogLines<F> {
    /// Lines of the `json` format (else text) to `open()`.
    pub fn new(open: F, json: bool) -> Self {
        Self { open, json }
    }
}

impl<'a, F, W> tracing_subscriber::fmt::MakeWriter<'a> for BoundedLogLines<F>
where
    F: Fn() -> W + 'static,
    W: std::io::Write,
{
    type Writer = BoundedLogLine<W>;

    fn make_writer(&'a self) -> Self::Writer {
        BoundedLogLine {
            out: (self.open)(),
            json: self.json,
            line: Vec::new(),
        }
    }
}

/// One log line on its way out ([`BoundedLogLines`]).
pub struct BoundedLogLine<W: std::io::Write> {
    out: W,
    json: bool,
    line: Vec<u8>,
}

impl<W: std::io::Write> std::io::Write for BoundedLogLine<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.line.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.out.write_all(&bounded_log_line(&line, self.json))?;
        }
        self.out.flush()
    }
}

impl<W: std::io::Write> Drop for BoundedLogLine<W> {
    fn drop(&mut self) {
        // A log line that cannot be written has nowhere else to go.
        let _ = std::io::Write::flush(self);
    }
}
