//! A pseudo-terminal in front of the Verilator co-simulation of a board top
//! (verilator_uart.rs): whatever opens the slave side (`/dev/pts/N`) as a serial port talks to
//! the simulated board's UART pins, so a host's own tty set-up (termios, raw mode, baud, read
//! timeouts) runs as it would on a board. Two threads copy bytes between the pty master and
//! the harness's stdin and stdout.
//!
//! The slave's termios is left as the kernel makes it (canonical, echo, CR/NL translation):
//! a serial port opened without proper raw set-up corrupts the stream here as on a board.

use super::verilator_uart::{board_top_harness, spawn_harness};
use crate::boards::BoardInfo;
use crate::design::Inner;
use anyhow::{bail, Context, Result};
use edgeflow_flow::verilator::Harness;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a copying thread waits on the master before it looks at the stop flag again.
const POLL_MS: i32 = 50;

pub struct PtyBridge {
    slave_path: PathBuf,
    child: Child,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// Held open while the bridge runs: on Linux a master read fails with EIO while no slave
    /// descriptor is open, which is the case between one user's close and the next one's open.
    _slave: File,
}

impl PtyBridge {
    /// Build (cached) and start the co-simulation of `inner` in board `b`'s top at `baud`,
    /// behind a new pseudo-terminal.
    pub fn start(inner: &Inner, b: &BoardInfo, baud: u32) -> Result<PtyBridge> {
        let (h, top) = board_top_harness(inner, b, baud)?;
        PtyBridge::spawn(&h, top.clocks_per_bit)
    }

    /// Start a built board-top harness behind a new pseudo-terminal.
    pub fn spawn(h: &Harness, clocks_per_bit: u16) -> Result<PtyBridge> {
        let (master, slave_path) = open_master()?;
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&slave_path)
            .with_context(|| format!("cannot open {}", slave_path.display()))?;
        let mut child = spawn_harness(h, clocks_per_bit, None)?;
        let stdin = child.stdin.take().context("harness stdin")?;
        let stdout = child.stdout.take().context("harness stdout")?;
        let master = Arc::new(master);
        let stop = Arc::new(AtomicBool::new(false));
        let threads = vec![
            to_board(master.clone(), stdin, stop.clone()),
            from_board(master, stdout, stop.clone()),
        ];
        Ok(PtyBridge {
            slave_path,
            child,
            stop,
            threads,
            _slave: slave,
        })
    }

    /// The serial port to open: `/dev/pts/N`.
    pub fn slave_path(&self) -> &Path {
        &self.slave_path
    }

    /// Stop the harness and the threads; an error if the harness had ended on its own.
    pub fn stop(mut self) -> Result<()> {
        let early = self.child.try_wait().ok().flatten();
        self.shutdown();
        if let Some(status) = early {
            bail!("the board-top simulation ended by itself ({status})");
        }
        Ok(())
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // the harness gone, its stdout reaches end of file and its stdin refuses writes
        let _ = self.child.kill();
        let _ = self.child.wait();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for PtyBridge {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A new pty master (non-blocking, so the threads can look at the stop flag) and the path of
/// its slave.
fn open_master() -> Result<(File, PathBuf)> {
    // SAFETY: plain libc calls on a descriptor this function owns; ptsname_r writes at most
    // `buf.len()` bytes including the terminating NUL.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_NONBLOCK);
        if fd < 0 {
            bail!(
                "cannot open a pseudo-terminal: {}",
                std::io::Error::last_os_error()
            );
        }
        let master = File::from_raw_fd(fd);
        if libc::grantpt(fd) != 0 || libc::unlockpt(fd) != 0 {
            bail!(
                "cannot unlock the pseudo-terminal: {}",
                std::io::Error::last_os_error()
            );
        }
        let mut buf = [0u8; 128];
        let r = libc::ptsname_r(fd, buf.as_mut_ptr().cast(), buf.len());
        if r != 0 {
            bail!(
                "cannot name the pseudo-terminal: {}",
                std::io::Error::from_raw_os_error(r)
            );
        }
        let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
        let path = PathBuf::from(String::from_utf8_lossy(&buf[..end]).to_string());
        Ok((master, path))
    }
}

/// Wait up to [`POLL_MS`] for `events` on `f`; false on a timeout.
fn ready(f: &File, events: libc::c_short) -> bool {
    let mut p = libc::pollfd {
        fd: f.as_raw_fd(),
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    unsafe { libc::poll(&mut p, 1, POLL_MS) > 0 }
}

fn no_slave(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EIO)
}

/// What the host writes to the serial port, into the harness's stdin (the FPGA's RX pin).
fn to_board(
    master: Arc<File>,
    mut stdin: std::process::ChildStdin,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 4096];
        while !stop.load(Ordering::SeqCst) {
            if !ready(&master, libc::POLLIN) {
                continue;
            }
            match (&*master).read(&mut buf) {
                Ok(0) => std::thread::sleep(Duration::from_millis(10)),
                Ok(k) => {
                    if stdin
                        .write_all(&buf[..k])
                        .and_then(|_| stdin.flush())
                        .is_err()
                    {
                        break;
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
                // hung up (no slave open): poll returns at once, so do not spin
                Err(e) if no_slave(&e) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break,
            }
        }
    })
}

/// What the harness sends on the FPGA's TX pin, to whoever reads the serial port.
fn from_board(
    master: Arc<File>,
    mut stdout: std::process::ChildStdout,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 4096];
        while let Ok(k) = stdout.read(&mut buf) {
            if k == 0 {
                break;
            }
            let mut done = 0;
            while done < k {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                match (&*master).write(&buf[done..k]) {
                    Ok(n) => done += n,
                    // the slave's input queue is full: wait until its reader takes some
                    Err(e)
                        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) =>
                    {
                        ready(&master, libc::POLLOUT);
                    }
                    Err(e) if no_slave(&e) => std::thread::sleep(Duration::from_millis(10)),
                    Err(_) => return,
                }
            }
        }
    })
}
