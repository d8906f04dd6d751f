//! One connection served: its byte stream watched on the way to the HTTP
//! layer, its timeouts, and the reset that chaos asks for.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;

use super::byte_layer::Writer;
use super::state::ConnState;
use crate::config::Limits;
use crate::legal::Legal;
use crate::router::App;

/// The TCP socket under a stream, for the reset.
trait Socket {
    fn socket(&self) -> &TcpStream;
}

impl Socket for TcpStream {
    fn socket(&self) -> &TcpStream {
        self
    }
}

impl Socket for tokio_rustls::server::TlsStream<TcpStream> {
    fn socket(&self) -> &TcpStream {
        self.get_ref().0
    }
}

/// How long, and how much, a closing connection reads and discards.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 4 * 1024 * 1024;

/// How long a connection may idle after an answer under `idle-close`.
const IDLE_CLOSE: Duration = Duration::from_millis(50);

/// The connection's byte stream (decrypted, with TLS), watched: every
/// byte read goes through the scanner on its way to the HTTP layer, and
/// every byte written through the byte layer (`byte_layer`), which
/// follows the answers' heads and rewrites those it is told to.
struct Watched<S: Socket> {
    inner: S,
    state: Arc<ConnState>,
    /// While closing: the end of the lingering, and the bytes discarded.
    linger: Option<Pin<Box<tokio::time::Sleep>>>,
    discarded: usize,
    /// Bytes read from the socket, before the scanner.
    raw: Vec<u8>,
    /// Scanned bytes the HTTP layer has not taken yet, from `pending_at`.
    pending: Vec<u8>,
    pending_at: usize,
    /// The byte layer of the write side.
    writer: Writer,
    /// Bytes the byte layer has taken from the HTTP layer and not yet
    /// written to the socket, from `out_at`.
    out: Vec<u8>,
    out_at: usize,
}

impl<S: Socket + AsyncWrite + Unpin> Watched<S> {
    /// Writes what the byte layer holds to the socket.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.out_at < self.out.len() {
            let n = std::task::ready!(
                Pin::new(&mut self.inner).poll_write(cx, &self.out[self.out_at..])
            )?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.out_at += n;
        }
        self.out.clear();
        self.out_at = 0;
        Poll::Ready(Ok(()))
    }

    /// Gives `buf` to the byte layer (all of it is taken), and writes
    /// what it can of the result.
    fn take(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.writer.take(buf, &mut self.out, &self.state);
        if let Poll::Ready(Err(e)) = self.drain(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }
}

impl<S: Socket + AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.pending_at < this.pending.len() {
            let n = buf.remaining().min(this.pending.len() - this.pending_at);
            buf.put_slice(&this.pending[this.pending_at..this.pending_at + n]);
            this.pending_at += n;
            return Poll::Ready(Ok(()));
        }
        this.raw.resize(buf.remaining().clamp(1, 64 * 1024), 0);
        let mut raw = ReadBuf::new(&mut this.raw);
        std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, &mut raw))?;
        let read = raw.filled().len();
        if read == 0 {
            return Poll::Ready(Ok(()));
        }
        this.pending.clear();
        this.pending_at = 0;
        this.state
            .scanner()
            .feed(&this.raw[..read], &mut this.pending);
        let n = buf.remaining().min(this.pending.len());
        buf.put_slice(&this.pending[..n]);
        this.pending_at = n;
        Poll::Ready(Ok(()))
    }
}

impl<S: Socket + AsyncRead + AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    /// Body bytes go to the socket as they are; heads (and chunked
    /// bodies) through the byte layer.
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        std::task::ready!(this.drain(cx))?;
        match this.writer.passable(buf.len()) {
            Some(n) if n > 0 => {
                let n = std::task::ready!(Pin::new(&mut this.inner).poll_write(cx, &buf[..n]))?;
                this.writer.passed(n);
                Poll::Ready(Ok(n))
            }
            _ => this.take(cx, buf),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    /// A lingering close: after the answer and the FIN, what the client
    /// still sends (a body refused unread) is read and discarded for a
    /// while, so that closing does not reset the connection before the
    /// client has read the answer.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.linger.is_none() && self.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        if self.state.reset.load(Ordering::SeqCst) {
            // A reset must not be turned into a clean close.
            return Poll::Ready(Ok(()));
        }
        if self.linger.is_none() {
            std::task::ready!(Pin::new(&mut self.inner).poll_shutdown(cx))?;
            self.linger = Some(Box::pin(tokio::time::sleep(LINGER)));
        }
        let mut scratch = [0u8; 8192];
        loop {
            let expired = self
                .linger
                .as_mut()
                .is_some_and(|deadline| deadline.as_mut().poll(cx).is_ready());
            if expired || self.discarded > LINGER_BYTES {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.inner).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => self.discarded += buf.filled().len(),
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// As `poll_write`: body bytes (as many as the body has left) go to
    /// the socket in one vectored write; anything else, one slice at a
    /// time through the byte layer.
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        std::task::ready!(this.drain(cx))?;
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        match this.writer.passable(total) {
            Some(n) if n == total && n > 0 => {
                let n = std::task::ready!(Pin::new(&mut this.inner).poll_write_vectored(cx, bufs))?;
                this.writer.passed(n);
                Poll::Ready(Ok(n))
            }
            Some(n) if n > 0 => {
                let first = bufs
                    .iter()
                    .find(|b| !b.is_empty())
                    .map_or(&[][..], |b| &b[..]);
                let n = n.min(first.len());
                let n = std::task::ready!(Pin::new(&mut this.inner).poll_write(cx, &first[..n]))?;
                this.writer.passed(n);
                Poll::Ready(Ok(n))
            }
            _ => {
                let first = bufs
                    .iter()
                    .find(|b| !b.is_empty())
                    .map_or(&[][..], |b| &b[..]);
                this.take(cx, first)
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl<S: Socket> Drop for Watched<S> {
    fn drop(&mut self) {
        if self.state.reset.load(Ordering::SeqCst) {
            // SO_LINGER 0: closing sends RST, not FIN.
            let _ = socket2::SockRef::from(self.inner.socket()).set_linger(Some(Duration::ZERO));
        }
    }
}

/// Serves one connection until it ends, is asked to close, or breaks a
/// timeout.
pub(super) async fn run(
    stream: TcpStream,
    app: Arc<App>,
    limits: Limits,
    tls: Option<TlsAcceptor>,
    state: Arc<ConnState>,
) {
    match tls {
        None => serve(stream, app, limits, state).await,
        Some(acceptor) => {
            let handshake =
                tokio::time::timeout(limits.header_read_timeout, acceptor.accept(stream));
            if let Ok(Ok(stream)) = handshake.await {
                serve(stream, app, limits, state).await;
            }
        }
    }
}

async fn serve<S>(stream: S, app: Arc<App>, limits: Limits, state: Arc<ConnState>)
where
    S: Socket + AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(Watched {
        inner: stream,
        state: state.clone(),
        linger: None,
        discarded: 0,
        raw: Vec::new(),
        pending: Vec::new(),
        pending_at: 0,
        writer: Writer::new(),
        out: Vec::new(),
        out_at: 0,
    });
    let idle_close = app.legal.has(Legal::IdleClose);
    let title_case = app.legal.has(Legal::TitleCaseFields);
    let service = {
        let state = state.clone();
        hyper::service::service_fn(move |request| {
            super::service::answer(request, app.clone(), state.clone(), limits)
        })
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        // Runs while hyper waits for a head: it bounds idle keep-alive too.
        .header_read_timeout(limits.idle_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192))
        .max_headers(limits.max_headers)
        .title_case_headers(title_case);
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    let watchdog = watchdog(&state, &limits);
    tokio::pin!(watchdog);
    let idle = idle_after_answer(&state, idle_close);
    tokio::pin!(idle);
    let mut closing = false;
    loop {
        if closing {
            // Closed by the HTTP layer, which does it only between
            // requests: a request under way is answered first (with
            // Connection: close), and the close lingers.
            connection.as_mut().graceful_shutdown();
        }
        tokio::select! {
            _ = connection.as_mut() => return,
            _ = state.close.notified() => return,
            _ = &mut watchdog => return,
            _ = &mut idle, if !closing => closing = true,
        }
    }
}

/// Ends once the connection has been idle for [`IDLE_CLOSE`] after an
/// answer, under `idle-close` (never without it).
async fn idle_after_answer(state: &ConnState, on: bool) {
    if !on {
        return std::future::pending().await;
    }
    loop {
        let wait = match state.idle_since() {
            Some(since) => IDLE_CLOSE.saturating_sub(since.elapsed()),
            None => IDLE_CLOSE,
        };
        if wait.is_zero() && state.idle_since().is_some() {
            return;
        }
        tokio::time::sleep(wait.max(Duration::from_millis(1))).await;
    }
}

/// Ends when a request head takes longer than its timeout from its first
/// byte, or an answer takes longer than its timeout to be written.
async fn watchdog(state: &ConnState, limits: &Limits) {
    let every = (limits.header_read_timeout / 4)
        .min(Duration::from_millis(500))
        .max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(every).await;
        if state
            .head_started()
            .is_some_and(|t| t.elapsed() > limits.header_read_timeout)
        {
            return;
        }
        if state
            .busy_for()
            .is_some_and(|d| d > limits.response_timeout)
        {
            return;
        }
    }
}
