//! The serial transport: host-link words over a UART (8N1, each word low byte first), on a
//! tty configured raw with termios, or over any byte stream (the RTL simulation of a board
//! top in the tests).

use super::hostlink::{AnswerCorrupted, WordLink};
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_hdl::uart_frames::{frame, frame_intact, FRAME_BAD, FRAME_OK, FRAME_WORDS};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// Times a frame the board answered [`FRAME_BAD`] is sent again before the run stops.
pub const FRAME_RETRIES: usize = 3;

/// Words over a byte stream, in the checked frames of hdl/PROTOCOL.md ("Serial framing").
/// Reads must return within a short time (a tty with VTIME, or a simulation that steps until
/// it has bytes) so `recv` can enforce its timeout.
pub struct ByteStreamLink<S: Read + Write> {
    pub stream: S,
    pub name: String,
    pub timeout: Duration,
    /// The network's words that came in frames before anyone asked for them.
    pending: VecDeque<u16>,
    /// Host frames the board dropped as corrupted and that were sent again.
    pub frames_resent: u64,
    /// Frames from the board that failed their sums (or did not start as a frame).
    pub answers_corrupted: u64,
}

enum Unit {
    Ok,
    Bad,
    Data(Vec<u16>),
}

impl<S: Read + Write> ByteStreamLink<S> {
    pub fn new(stream: S, name: impl Into<String>, timeout: Duration) -> Self {
        ByteStreamLink {
            stream,
            name: name.into(),
            timeout,
            pending: VecDeque::new(),
            frames_resent: 0,
            answers_corrupted: 0,
        }
    }

    fn write_words(&mut self, words: &[u16]) -> Result<()> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.stream
            .write_all(&bytes)
            .with_context(|| format!("writing to {}", self.name))?;
        self.stream
            .flush()
            .with_context(|| format!("writing to {}", self.name))
    }

    fn read_words(&mut self, n: usize) -> Result<Vec<u16>> {
        let mut b = vec![0u8; 2 * n];
        let mut have = 0;
        let mut last = Instant::now();
        while have < b.len() {
            let k = self
                .stream
                .read(&mut b[have..])
                .with_context(|| format!("reading from {}", self.name))?;
            if k == 0 {
                if last.elapsed() > self.timeout {
                    bail!(
                        "{}: no answer for {:.0} s ({} of {} bytes received); is the edgeflow bitstream loaded and the baud rate right?",
                        self.name,
                        self.timeout.as_secs_f64(),
                        have,
                        b.len()
                    );
                }
                continue;
            }
            have += k;
            last = Instant::now();
        }
        Ok(b.chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect())
    }

    /// Read until the line has been silent for one read (the rest of a corrupted answer).
    fn drain(&mut self) {
        let mut b = [0u8; 256];
        while matches!(self.stream.read(&mut b), Ok(k) if k > 0) {}
        self.pending.clear();
    }

    /// The next answer or frame from the board; a corrupted one drains the line and fails
    /// with [`AnswerCorrupted`].
    fn read_unit(&mut self) -> Result<Unit> {
        let head = self.read_words(1)?[0];
        let n = head as usize;
        let what = match head {
            FRAME_OK => return Ok(Unit::Ok),
            FRAME_BAD => return Ok(Unit::Bad),
            _ if (1..=FRAME_WORDS).contains(&n) => {
                let w = self.read_words(n + 2)?;
                if frame_intact(head, &w[..n], [w[n], w[n + 1]]) {
                    return Ok(Unit::Data(w[..n].to_vec()));
                }
                format!("a frame of {n} words failed its sums")
            }
            _ => format!("word {head:#06x} starts no frame"),
        };
        self.drain();
        self.answers_corrupted += 1;
        Err(anyhow!(AnswerCorrupted(format!(
            "{}: an answer from the board arrived corrupted ({what}); check the serial line, or use a lower --baud",
            self.name
        ))))
    }
}

impl<S: Read + Write> WordLink for ByteStreamLink<S> {
    /// Each frame waits for the board's answer; one it dropped is sent again.
    fn send(&mut self, words: &[u16]) -> Result<()> {
        let frames = words.len().div_ceil(FRAME_WORDS);
        for (k, chunk) in words.chunks(FRAME_WORDS).enumerate() {
            let f = frame(chunk);
            let mut refused = 0;
            loop {
                self.write_words(&f)?;
                let answer = loop {
                    match self.read_unit() {
                        Ok(Unit::Data(d)) => self.pending.extend(d),
                        Ok(a) => break a,
                        Err(e) => bail!(
                            "{e:#}; it came while frame {} of {frames} was being checked, so whether the board took that frame is unknown: reset the board (load its bitstream again) and start over",
                            k + 1
                        ),
                    }
                };
                if let Unit::Ok = answer {
                    break;
                }
                refused += 1;
                if refused > FRAME_RETRIES {
                    bail!(
                        "{}: the board refused frame {} of {frames} {refused} times (checksum mismatch: the serial line corrupts data); none of that frame reached the network, which now waits in the middle of a command: check the cable, use a lower --baud, and reset the board (load its bitstream again)",
                        self.name,
                        k + 1
                    );
                }
                self.frames_resent += 1;
                crate::ui::note(format!(
                    "{}: frame {} of {frames} arrived corrupted at the board (checksum mismatch) and was dropped; sending it again",
                    self.name,
                    k + 1
                ));
            }
        }
        Ok(())
    }
    fn recv_within(&mut self, n: usize, wait: Duration) -> Result<Vec<u16>> {
        let before = self.timeout;
        self.timeout = before.max(wait);
        let r = self.recv(n);
        self.timeout = before;
        r
    }

    fn recv(&mut self, n: usize) -> Result<Vec<u16>> {
        while self.pending.len() < n {
            match self.read_unit()? {
                Unit::Data(d) => self.pending.extend(d),
                Unit::Ok | Unit::Bad => bail!(
                    "{}: the board answered a frame nobody sent ({} of {n} words received): the link is out of step; reset the board",
                    self.name,
                    self.pending.len()
                ),
            }
        }
        Ok(self.pending.drain(..n).collect())
    }
    fn describe(&self) -> String {
        self.name.clone()
    }
}

fn baud_constant(baud: u32) -> Result<libc::speed_t> {
    Ok(match baud {
        9600 => libc::B9600,
        19200 => libc::B19200,
        38400 => libc::B38400,
        57600 => libc::B57600,
        115200 => libc::B115200,
        230400 => libc::B230400,
        460800 => libc::B460800,
        921600 => libc::B921600,
        1000000 => libc::B1000000,
        2000000 => libc::B2000000,
        3000000 => libc::B3000000,
        other => bail!("baud rate {other} is not supported; use 115200, 230400, 460800, 921600, 1000000, 2000000 or 3000000"),
    })
}

/// Open a tty raw at `baud`, 8N1, no flow control, reads returning after 0.1 s of silence.
pub fn open_tty(path: &str, baud: u32) -> Result<std::fs::File> {
    use std::os::unix::io::AsRawFd;
    let speed = baud_constant(baud)?;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open serial port {path} (is the board plugged in, and are you in the dialout group?)"))?;
    let fd = f.as_raw_fd();
    // SAFETY: fd is a valid open descriptor for the lifetime of `f`; termios is plain data.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(fd, &mut t) != 0 {
            bail!(
                "{path} is not a serial port (tcgetattr failed: {})",
                std::io::Error::last_os_error()
            );
        }
        libc::cfmakeraw(&mut t);
        t.c_cflag |= libc::CLOCAL | libc::CREAD;
        t.c_cflag &= !(libc::CSTOPB | libc::PARENB | libc::CRTSCTS);
        t.c_iflag &= !(libc::IXON | libc::IXOFF);
        t.c_cc[libc::VMIN] = 0;
        t.c_cc[libc::VTIME] = 1;
        libc::cfsetispeed(&mut t, speed);
        libc::cfsetospeed(&mut t, speed);
        if libc::tcsetattr(fd, libc::TCSANOW, &t) != 0 {
            bail!(
                "cannot configure {path}: {}",
                std::io::Error::last_os_error()
            );
        }
        libc::tcflush(fd, libc::TCIOFLUSH);
    }
    Ok(f)
}

/// `serial:/dev/ttyUSB1` or `serial:/dev/ttyUSB1@1000000`.
pub fn parse_backend(s: &str) -> Option<(String, u32)> {
    let rest = s.strip_prefix("serial:")?;
    match rest.rsplit_once('@') {
        Some((p, b)) => Some((p.to_string(), b.parse().ok()?)),
        None => Some((rest.to_string(), DEFAULT_BAUD)),
    }
}

pub const DEFAULT_BAUD: u32 = 115_200;

pub fn open(path: &str, baud: u32) -> Result<ByteStreamLink<std::fs::File>> {
    Ok(ByteStreamLink::new(
        open_tty(path, baud)?,
        format!("serial:{path}@{baud}"),
        Duration::from_secs(10),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_names_parse_and_bad_ports_are_named() {
        assert_eq!(
            parse_backend("serial:/dev/ttyUSB1"),
            Some(("/dev/ttyUSB1".into(), 115200))
        );
        assert_eq!(
            parse_backend("serial:/dev/ttyUSB1@3000000"),
            Some(("/dev/ttyUSB1".into(), 3_000_000))
        );
        assert_eq!(parse_backend("reference"), None);
        let e = open("/dev/edgeflow-no-such-tty", 115200)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("/dev/edgeflow-no-such-tty"), "{e}");
        let e = open("/dev/null", 115200).err().unwrap().to_string();
        assert!(e.contains("not a serial port"), "{e}");
        assert!(baud_constant(12345).is_err());
    }

    #[test]
    fn words_cross_the_simulated_board_uart_through_the_transport() {
        use edgeflow_hdl::echo_standin::EchoStandIn;
        use edgeflow_hdl::echo_top::EchoBoardTop;
        use edgeflow_hdl::ice40_pll::ClockSource;
        use edgeflow_hdl::uart_sim_port::SimUartPort;
        let top = EchoBoardTop::new(EchoStandIn::default(), ClockSource::Direct, 6, true);
        let port = SimUartPort::new(Box::new(top), 6);
        let mut link = ByteStreamLink::new(port, "sim-uart", Duration::from_secs(5));
        let words: Vec<u16> = vec![0x0001, 0x00FF, 0xFF00, 0x8000, 0x7FFF, 0xFFFF];
        link.send(&words).unwrap();
        let back = link.recv(words.len()).unwrap();
        let want: Vec<u16> = words.iter().map(|w| w.wrapping_add(1)).collect();
        assert_eq!(back, want);
        // Nothing more comes: a read for one more word times out with a clear message.
        link.timeout = Duration::from_millis(50);
        let e = link.recv(1).unwrap_err().to_string();
        assert!(e.contains("no answer"), "{e}");
    }

    /// A board busy with a long command: its answer's bytes (each word in its own serial
    /// frame) come only after a moment.
    struct Busy {
        answer: std::collections::VecDeque<u8>,
        until: Instant,
    }

    impl Read for Busy {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if Instant::now() < self.until || self.answer.is_empty() {
                std::thread::sleep(Duration::from_millis(2));
                return Ok(0);
            }
            let n = buf.len().min(self.answer.len());
            for (i, b) in self.answer.drain(..n).enumerate() {
                buf[i] = b;
            }
            Ok(n)
        }
    }

    impl Write for Busy {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// An answer later than the link's timeout fails `recv` and arrives through
    /// `recv_within` given the time; the link's own timeout is back afterwards.
    #[test]
    fn a_long_command_is_given_its_time_for_the_answer() {
        let busy = |ms: u64| Busy {
            answer: [8u16, 9]
                .iter()
                .flat_map(|&w| frame(&[w]))
                .flat_map(|w| w.to_le_bytes())
                .collect(),
            until: Instant::now() + Duration::from_millis(ms),
        };
        let mut link = ByteStreamLink::new(busy(300), "busy", Duration::from_millis(100));
        let e = link.recv(2).unwrap_err().to_string();
        assert!(e.contains("no answer"), "{e}");
        let mut link = ByteStreamLink::new(busy(300), "busy", Duration::from_millis(100));
        assert_eq!(
            link.recv_within(2, Duration::from_secs(5)).unwrap(),
            vec![8, 9]
        );
        assert_eq!(link.timeout, Duration::from_millis(100));
    }
}

#[cfg(test)]
mod network_tests {
    use super::*;
    use crate::board::hostlink::HostLinkBoard;
    use crate::board::Board;
    use edgeflow_core::{Spec, State};
    use edgeflow_hdl::ice40_pll::ClockSource;
    use edgeflow_hdl::network::Network;
    use edgeflow_hdl::network_top::NetworkBoardTop;
    use edgeflow_hdl::testbench::rtl::random_data;
    use edgeflow_hdl::uart_sim_port::SimUartPort;
    use edgeflow_reference::Reference;

    /// The real-board path without a board: the serial transport speaks to the rust-hdl
    /// simulation of the board top (power-on hold, UART receiver and transmitter, word
    /// bridge, network), byte by byte on the simulated RX/TX pins.
    #[test]
    fn serial_transport_trains_the_simulated_board_top_like_the_reference() {
        let spec = Spec::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../specs/tiny.toml"
        )))
        .unwrap();
        let cpb = 4;
        let top = NetworkBoardTop::new(Network::new(&spec), ClockSource::Direct, cpb, true);
        let port = SimUartPort::new(Box::new(top), cpb as usize);
        let link = ByteStreamLink::new(port, "sim-uart:tiny", Duration::from_secs(60));
        let mut board = HostLinkBoard::with_initial_state(&spec, link).unwrap();
        let data = random_data(&spec, 6, 11);
        board.train(&data).unwrap();
        let preds = board.infer(&data).unwrap();
        let got = board.read_state().unwrap();
        let mut r = Reference::new(&spec);
        r.train(&data);
        if let Some(d) = r.state.first_difference(&got, Some(&r.patterns)) {
            panic!("state over the simulated UART differs from the reference: {d}");
        }
        assert_eq!(got.sha256(), r.state.sha256());
        assert_eq!(preds, r.infer(&data));
        assert_ne!(
            got.sha256(),
            State::initial(&spec).sha256(),
            "training changed nothing"
        );
    }
}
