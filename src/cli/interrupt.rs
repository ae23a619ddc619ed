//! What a mutating command does when its user stops reading or presses
//! Ctrl-C half way: it never stops silently between two writes.
//!
//! - A closed stdout or stderr ([`PipeGuard`]): a read-only view stops
//!   quietly, like any Unix filter (`status | head`); a command that
//!   changes the cluster carries on to the end with its output discarded,
//!   then exits 1 saying on stderr (when it can) that its report was cut.
//! - Ctrl-C (SIGINT, [`run`]): between two steps a command stops at once
//!   and says what it left ([`set_left`]) and the one command that
//!   finishes it; a step that must not be cut in two ([`hold`]: a
//!   credential revoked but its replacement not yet written; a bulk
//!   command's sites in flight) finishes first. A second Ctrl-C stops at
//!   once. Exit code 130, as a shell reports a process killed by SIGINT.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use super::Error;
pub use super::error::{Left, Said};

/// Steps in progress that must not be cut in two.
static HELD: AtomicUsize = AtomicUsize::new(0);
/// Whether Ctrl-C was pressed.
static REQUESTED: AtomicBool = AtomicBool::new(false);
/// What the command has left so far, as said on an interrupt.
static LEFT: Mutex<Said> = Mutex::new(Said::Unknown);

/// Records what the command has left so far (replacing what was said
/// before).
pub fn set_left(left: Left) {
    *LEFT.lock().unwrap_or_else(|e| e.into_inner()) = Said::Left(left);
}

/// Records that the command has changed nothing (yet).
pub fn nothing_changed() {
    *LEFT.lock().unwrap_or_else(|e| e.into_inner()) = Said::Nothing;
}

/// Whether Ctrl-C was pressed: a bulk command starts no further site.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// A step that Ctrl-C does not cut in two, until the guard is dropped.
#[must_use = "the step is protected only while the guard lives"]
pub struct Hold(());

/// Protects the steps until the returned guard is dropped.
pub fn hold() -> Hold {
    HELD.fetch_add(1, Ordering::SeqCst);
    Hold(())
}

impl Drop for Hold {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How often a held step is checked for its end after Ctrl-C.
const HELD_POLL: Duration = Duration::from_millis(20);

/// Runs a mutating command under the Ctrl-C rules of this module.
pub async fn run<F>(command: F) -> Result<(), Error>
where
    F: Future<Output = Result<(), Error>>,
{
    let mut command = std::pin::pin!(command);
    tokio::select! {
        biased;
        result = &mut command => return result,
        signal = tokio::signal::ctrl_c() => {
            if signal.is_err() {
                // No SIGINT handler could be installed: the default applies.
                return command.await;
            }
        }
    }
    REQUESTED.store(true, Ordering::SeqCst);
    let mut second = std::pin::pin!(tokio::signal::ctrl_c());
    let mut cut = false;
    while HELD.load(Ordering::SeqCst) > 0 {
        tokio::select! {
            biased;
            result = &mut command => return result,
            _ = &mut second => { cut = true; break; }
            () = tokio::time::sleep(HELD_POLL) => {}
        }
    }
    // A command that ends without another wait (its last held step just
    // done) says so itself.
    if !cut && let Some(result) = futures::FutureExt::now_or_never(&mut command) {
        return result;
    }
    let left = LEFT.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Err(Error::Interrupted { left, cut })
}

/// stdout or stderr of a command that changes the cluster: once the
/// reader went away (EPIPE), what is written is discarded rather than
/// failing the command half way; [`PipeGuard::closed`] says so after.
pub struct PipeGuard<'a> {
    inner: &'a mut dyn Write,
    closed: bool,
}

impl<'a> PipeGuard<'a> {
    /// Guards `inner`.
    pub fn new(inner: &'a mut dyn Write) -> Self {
        PipeGuard {
            inner,
            closed: false,
        }
    }

    /// Whether the reader went away before everything was written.
    pub fn closed(&self) -> bool {
        self.closed
    }
}

impl Write for PipeGuard<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader goes away after `room` bytes.
    struct Pipe {
        got: Vec<u8>,
        room: usize,
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.got.len() + buf.len() > self.room {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            self.got.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_noted_and_later_writes_are_discarded() {
        let mut pipe = Pipe {
            got: Vec::new(),
            room: 6,
        };
        let mut guard = PipeGuard::new(&mut pipe);
        writeln!(guard, "first").unwrap();
        assert!(!guard.closed());
        writeln!(guard, "second").unwrap();
        writeln!(guard, "third").unwrap();
        assert!(guard.closed());
        assert_eq!(pipe.got, b"first\n");
    }

    #[test]
    fn other_write_errors_still_fail() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut full = Full;
        let mut guard = PipeGuard::new(&mut full);
        assert!(writeln!(guard, "x").is_err());
        assert!(!guard.closed());
    }
}
