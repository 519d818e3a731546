//! Builds from stored records named by id (`js/catalog.js` interns each tool's text once and
//! passes ids): the catalog, or, in the same answer, the positions of the ids the store no
//! longer holds (evicted after a minute unused), whose tools the caller serializes again.

use super::store::{self, SlotId};
use super::{Catalog, CatalogOptions, SourceSelector};
use crate::error::Result;

/// What a build by id answers. Made once per build and moved to the caller,
/// never stored: a boxed catalog would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum FromSlots {
    Built(Catalog),
    /// Positions in the ids given, in order.
    Missing(Vec<usize>),
}

impl Catalog {
    /// [`Catalog::from_stored`] of the records `ids` name.
    pub fn from_slots(ids: &[SlotId], options: &CatalogOptions) -> Result<FromSlots> {
        match store::find(ids) {
            Ok(records) => Catalog::from_stored(records, options).map(FromSlots::Built),
            Err(missing) => Ok(FromSlots::Missing(missing)),
        }
    }

    /// [`Catalog::append_stored`] of the records `ids` name.
    pub fn append_slots(&self, ids: &[SlotId]) -> Result<FromSlots> {
        match store::find(ids) {
            Ok(records) => self.append_stored(records).map(FromSlots::Built),
            Err(missing) => Ok(FromSlots::Missing(missing)),
        }
    }

    /// [`Catalog::with_source_stored`] of the records `ids` name.
    pub fn with_source_slots(
        &self,
        selector: &SourceSelector,
        ids: &[SlotId],
    ) -> Result<FromSlots> {
        match store::find(ids) {
            Ok(records) => self
                .with_source_stored(selector, records)
                .map(FromSlots::Built),
            Err(missing) => Ok(FromSlots::Missing(missing)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_the_store_does_not_hold_are_named_in_the_answer() {
        let stored = store::intern_named([r#"{"name":"slots_probe_tool","description":"d"}"#]);
        let known = stored[0].id;
        let unknown = SlotId {
            slot: u32::MAX,
            generation: 0,
        };
        let options = CatalogOptions::default();
        match Catalog::from_slots(&[known, unknown, known], &options).unwrap() {
            FromSlots::Missing(missing) => assert_eq!(missing, vec![1]),
            FromSlots::Built(_) => panic!("an unknown id built a catalog"),
        }
        let FromSlots::Built(catalog) = Catalog::from_slots(&[known], &options).unwrap() else {
            panic!("a stored id was not found");
        };
        assert_eq!(catalog.size(), 1);
        match catalog.append_slots(&[unknown]).unwrap() {
            FromSlots::Missing(missing) => assert_eq!(missing, vec![0]),
            FromSlots::Built(_) => panic!("an unknown id was appended"),
        }
        let selector: SourceSelector =
            serde_json::from_value(serde_json::json!({ "source": "mcp", "owner": "x" })).unwrap();
        assert!(matches!(
            catalog.with_source_slots(&selector, &[unknown]).unwrap(),
            FromSlots::Missing(missing) if missing == vec![0]
        ));
        drop(stored);
    }
}
