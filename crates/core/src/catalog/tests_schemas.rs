//! Hostile schemas at catalog build (the schema module's cost bound applied
//! by the catalog): a catalog test, using the schema tests' fixtures.

use serde_json::json;

use crate::catalog::{Catalog, CatalogOptions};
use crate::error::ErrorCode;
use crate::schema::tests::hostile::{fanout_schema, tree_schema};

#[test]
fn fanout_schemas_are_excluded_at_catalog_build() {
    for depth in [20, 21, 30] {
        let records = vec![
            json!({"source": "mcp", "owner": "evil", "name": "fan", "inputSchema": fanout_schema(depth)}),
            json!({"name": "trusted_fan", "inputSchema": {"type": "object"}, "outputSchema": fanout_schema(depth)}),
            json!({"source": "mcp", "owner": "good", "name": "tree", "inputSchema": tree_schema()}),
        ];
        let catalog = Catalog::from_records(records.clone(), &CatalogOptions::default()).unwrap();
        let ids: Vec<&str> = catalog.entries().map(|e| e.id.as_str()).collect();
        // The trusted tool keeps its place without its output hint; the untrusted one's
        // input schema is what it is called by: refused.
        assert_eq!(ids, ["mcp:good:tree", "openclaw:core:trusted_fan"]);
        let trusted = catalog.entries().find(|e| e.name == "trusted_fan").unwrap();
        assert!(trusted.output_schema.is_none());
        let reasons: Vec<&str> = catalog
            .excluded()
            .iter()
            .map(|e| e.reason.as_str())
            .collect();
        assert_eq!(reasons.len(), 1);
        assert!(
            reasons[0]
                .starts_with("inputSchema rejected (INVALID_SCHEMA): too expensive to validate"),
            "{reasons:?}"
        );
        assert_eq!(
            catalog
                .validate_args("fan", &json!({"x": 1}))
                .unwrap_err()
                .code,
            ErrorCode::ToolNotFound
        );
        let strict = CatalogOptions {
            strict: true,
            ..CatalogOptions::default()
        };
        let err = Catalog::from_records(records, &strict).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidCatalog);
        assert!(err.message.contains("INVALID_SCHEMA"), "{err}");
    }
}
