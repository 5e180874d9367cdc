//! A response body that is either whole or fed chunk by chunk (server-sent events).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame};
use tokio::sync::mpsc;

pub enum SimBody {
    Full(Option<Bytes>),
    Chan(mpsc::UnboundedReceiver<Bytes>),
}

impl SimBody {
    pub fn full(b: impl Into<Bytes>) -> SimBody {
        SimBody::Full(Some(b.into()))
    }
}

impl Body for SimBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            SimBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            SimBody::Chan(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match self {
            // An exact size lets hyper send Content-Length instead of chunks.
            SimBody::Full(Some(b)) => http_body::SizeHint::with_exact(b.len() as u64),
            SimBody::Full(None) => http_body::SizeHint::with_exact(0),
            SimBody::Chan(_) => http_body::SizeHint::default(),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, SimBody::Full(None))
    }
}
