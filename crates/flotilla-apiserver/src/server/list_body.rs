//! The body of a `<Kind>List` response, assembled from the items' cached JSON without decoding
//! or re-encoding them, and sent in chunks: a list of 100,000 objects (about 150 MB) starts
//! going out at once instead of after one buffer of its full size has been filled, and the
//! server never holds that second copy of the list.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use serde_json::json;

use crate::catalog::ResourceInfo;
use crate::registry::{ListItem, ListPage};

/// About how many bytes each frame carries.
const CHUNK: usize = 64 * 1024;

/// `{"apiVersion":…,"kind":…,"metadata":{…},"items":[` item `,` item … `]}`.
#[derive(Debug)]
pub struct ListBody {
    head: Option<Bytes>,
    items: std::vec::IntoIter<ListItem>,
    first: bool,
    /// The closing `]}` is still to be sent.
    open: bool,
    remaining: u64,
}

impl ListBody {
    pub fn new(info: &ResourceInfo, page: ListPage) -> Self {
        let mut metadata = json!({"resourceVersion": page.revision.to_string()});
        if let Some(token) = &page.continue_token {
            metadata["continue"] = token.clone().into();
        }
        let mut head = json!({
            "apiVersion": info.api_version(),
            "kind": info.list_kind,
            "metadata": metadata,
        })
        .to_string();
        // Reopen the object to append the items.
        head.pop();
        head.push_str(",\"items\":[");
        let commas = page.items.len().saturating_sub(1);
        let size = head.len() + page.items.iter().map(ListItem::len).sum::<usize>() + commas + 2;
        ListBody {
            head: Some(head.into()),
            items: page.items.into_iter(),
            first: true,
            open: true,
            remaining: size as u64,
        }
    }

    /// The next frame's bytes (empty at the end).
    fn next_chunk(&mut self) -> Vec<u8> {
        let mut chunk = Vec::with_capacity(CHUNK + CHUNK / 4);
        if let Some(head) = self.head.take() {
            chunk.extend_from_slice(&head);
        }
        while chunk.len() < CHUNK {
            match self.items.next() {
                Some(item) => {
                    if !self.first {
                        chunk.push(b',');
                    }
                    self.first = false;
                    item.write_json(&mut chunk);
                }
                None => {
                    if self.open {
                        chunk.extend_from_slice(b"]}");
                        self.open = false;
                    }
                    break;
                }
            }
        }
        chunk
    }
}

impl Body for ListBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let chunk = this.next_chunk();
        if chunk.is_empty() {
            return Poll::Ready(None);
        }
        this.remaining = this.remaining.saturating_sub(chunk.len() as u64);
        Poll::Ready(Some(Ok(Frame::data(chunk.into()))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(items: usize, item_size: usize) -> ListPage {
        ListPage {
            // Every other item is a cached object whose served form (resourceVersion spliced
            // in, revisions of 1 to 6 digits) is written only when the frame is.
            items: (0..items)
                .map(|i| {
                    let filler = "x".repeat(item_size);
                    let json =
                        Bytes::from(format!(r#"{{"i":{i},"metadata":{{}},"f":"{filler}"}}"#));
                    if i % 2 == 0 {
                        return ListItem::Encoded(json);
                    }
                    let revision = 10u64.pow((i % 6) as u32);
                    let object = crate::cache::CachedObject::from_stored(
                        Bytes::new(),
                        &json,
                        revision as i64,
                    )
                    .expect("splices");
                    ListItem::Cached(std::sync::Arc::new(object))
                })
                .collect(),
            revision: 7,
            continue_token: Some("next".into()),
        }
    }

    #[tokio::test]
    async fn a_list_body_is_the_list_in_frames_of_the_announced_size() {
        let info = crate::catalog::Catalog::with_builtins()
            .get("", "v1", "configmaps")
            .expect("built in");
        for (items, size) in [(0, 0), (1, 10), (3, 100_000), (5_000, 100)] {
            let body = ListBody::new(&info, page(items, size));
            let announced = body.size_hint().exact().expect("exact size");
            let mut body = body;
            let mut frames = 0;
            let mut bytes = Vec::new();
            while let Some(frame) =
                std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
            {
                let data = frame.expect("infallible").into_data().expect("data");
                assert!(!data.is_empty());
                bytes.extend_from_slice(&data);
                frames += 1;
            }
            assert!(body.is_end_stream());
            assert_eq!(bytes.len() as u64, announced);
            assert!(frames <= 1 + bytes.len() / CHUNK + 1);
            let list: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
            assert_eq!(list["kind"], "ConfigMapList");
            assert_eq!(list["metadata"]["resourceVersion"], "7");
            assert_eq!(list["metadata"]["continue"], "next");
            let got = list["items"].as_array().expect("items");
            assert_eq!(got.len(), items);
            for (i, item) in got.iter().enumerate() {
                assert_eq!(item["i"], i);
                if i % 2 == 1 {
                    let revision = 10u64.pow((i % 6) as u32).to_string();
                    assert_eq!(item["metadata"]["resourceVersion"], revision.as_str());
                }
            }
        }
    }
}
