//! Freeing a large catalog off the caller's thread.
//!
//! Dropping the last reference to a 12.8k-tool catalog frees its index,
//! entries, maps and record texts: about 50 ms, and on a gateway that drop
//! runs on the event loop (a JS object's finalizer). Large data is handed to
//! one long-lived background thread instead; small data is freed in place.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, OnceLock};

use super::data::CatalogData;
pub use super::data::{empty_data, BACKGROUND_RELEASE_MIN_ENTRIES};
use super::Catalog;

type Garbage = Box<dyn Send>;

fn reaper() -> Option<&'static Sender<Garbage>> {
    static REAPER: OnceLock<Option<Sender<Garbage>>> = OnceLock::new();
    REAPER
        .get_or_init(|| {
            let (sender, receiver) = channel::<Garbage>();
            std::thread::Builder::new()
                .name("openclaw-tool-search-release".into())
                .spawn(move || receiver.into_iter().for_each(drop))
                .ok()
                .map(|_| sender)
        })
        .as_ref()
}

/// Take `data` away from its owner if this is its last reference to large
/// data, and free it on the background thread. Otherwise leave it in place.
pub fn release(data: &mut Arc<CatalogData>) {
    if data.entries.len() < BACKGROUND_RELEASE_MIN_ENTRIES || Arc::strong_count(data) != 1 {
        return;
    }
    let (Some(reaper), Some(empty)) = (reaper(), empty_data()) else {
        return;
    };
    let taken = std::mem::replace(data, empty);
    // A send fails only if the thread is gone; the data is then dropped here.
    // The queue is unbounded: catalogs are replaced far less often than they free.
    let _ = reaper.send(Box::new(taken));
}

impl Drop for Catalog {
    /// The last view of a large catalog frees it on a background thread (a
    /// gateway drops catalogs on its event loop).
    fn drop(&mut self) {
        release(&mut self.data);
    }
}
