//! Why a record is left out of a catalog, as a code and the field at fault: a
//! caller acts on these (e.g. drops an unusable schema and builds again) and
//! never has to read the sentence.

/// The kind of refusal; `field` says where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExclusionCode {
    /// Not a JSON object the reader could read: invalid JSON, another type, or
    /// a record the gateway could not serialize.
    UnreadableRecord,
    /// A field of the wrong type, or a value the catalog refuses (`field`).
    InvalidField,
    /// An input or output schema the catalog refuses: too deep, too large,
    /// too costly to validate, or not a schema (`field`).
    InvalidSchema,
    /// A later record with the same id replaced this one.
    DuplicateId,
    /// A control tool's name: never cataloged.
    ControlTool,
}

impl ExclusionCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ExclusionCode::UnreadableRecord => "UNREADABLE_RECORD",
            ExclusionCode::InvalidField => "INVALID_FIELD",
            ExclusionCode::InvalidSchema => "INVALID_SCHEMA",
            ExclusionCode::DuplicateId => "DUPLICATE_ID",
            ExclusionCode::ControlTool => "CONTROL_TOOL",
        }
    }
}

/// A record refused by the reader or by normalization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: ExclusionCode,
    /// The record's field at fault (`name`, `owner`, `mcp`, `inputSchema`, ...).
    pub field: Option<&'static str>,
    pub reason: String,
}

impl Refusal {
    pub fn unreadable(reason: impl Into<String>) -> Refusal {
        Refusal {
            code: ExclusionCode::UnreadableRecord,
            field: None,
            reason: reason.into(),
        }
    }

    pub fn field(field: &'static str, reason: impl Into<String>) -> Refusal {
        Refusal {
            code: ExclusionCode::InvalidField,
            field: Some(field),
            reason: reason.into(),
        }
    }

    pub fn schema(field: &'static str, reason: impl Into<String>) -> Refusal {
        Refusal {
            code: ExclusionCode::InvalidSchema,
            field: Some(field),
            reason: reason.into(),
        }
    }

    /// A record named like a control tool.
    pub fn control() -> Refusal {
        Refusal {
            code: ExclusionCode::ControlTool,
            field: Some("name"),
            reason: "control tool (never cataloged)".into(),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}
