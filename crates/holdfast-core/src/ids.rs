//! Identifier newtypes, each parsed once at the boundary.

use std::fmt;

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{field}: {reason}")]
pub struct IdError {
    pub field: &'static str,
    pub reason: &'static str,
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident, $field:literal, $max:expr, $check:expr, $pattern:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The most characters (Unicode scalar values, as JSON Schema's `maxLength`
            /// counts them).
            pub const MAX_CHARS: usize = $max;

            /// What [`Self::parse`] accepts, as a regular expression for the OpenAPI
            /// document (ECMA-262 and Python `re` alike); tests pin it to the parser.
            pub const PATTERN: &str = $pattern;

            pub fn parse(text: &str) -> Result<Self, IdError> {
                if text.is_empty() || text.chars().count() > $max {
                    return Err(IdError { field: $field, reason: concat!("must be 1 to ", stringify!($max), " characters") });
                }
                let check: fn(&str) -> Result<(), &'static str> = $check;
                check(text).map_err(|reason| IdError { field: $field, reason })?;
                Ok(Self(text.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

fn account_charset(text: &str) -> Result<(), &'static str> {
    if text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
    {
        Ok(())
    } else {
        Err("may contain only A-Z a-z 0-9 . _ : -")
    }
}

/// 1–255 characters, none a control character (Unicode category Cc).
const PRINTABLE_255: &str = r"^[^\x00-\x1F\x7F-\x9F]{1,255}$";

fn printable(text: &str) -> Result<(), &'static str> {
    if text.chars().any(char::is_control) {
        Err("must not contain control characters")
    } else {
        Ok(())
    }
}

string_id!(
    /// `[A-Za-z0-9._:-]{1,128}`.
    AccountId, "account_id", 128, account_charset, r"^[A-Za-z0-9._:-]{1,128}$"
);
string_id!(
    /// A client's idempotency key: 1–255 characters, unique per account.
    IdempotencyKey, "idempotency_key", 255, printable, PRINTABLE_255
);
string_id!(
    /// A job id (opaque to clients; a UUIDv7 string when holdfast makes it).
    JobId, "job_id", 64, account_charset, r"^[A-Za-z0-9._:-]{1,64}$"
);
string_id!(
    /// A worker's name, for the record only.
    WorkerId, "worker_id", 255, printable, PRINTABLE_255
);

impl JobId {
    /// Wraps an id this process generated.
    pub fn from_generated(id: String) -> JobId {
        JobId(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_ids_follow_the_contract() {
        assert!(AccountId::parse("user-1.a_b:c").is_ok());
        assert!(AccountId::parse("").is_err());
        assert!(AccountId::parse("a b").is_err());
        assert!(AccountId::parse("é").is_err());
        assert!(AccountId::parse(&"a".repeat(128)).is_ok());
        assert!(AccountId::parse(&"a".repeat(129)).is_err());
        assert!(IdempotencyKey::parse(&"k".repeat(256)).is_err());
        assert!(IdempotencyKey::parse("a\u{0}b").is_err());
        assert!(IdempotencyKey::parse("click #1 — ünïcode").is_ok());
    }

    #[test]
    fn every_allowed_character_passes_and_others_are_named() {
        let all = "AZaz09._:-";
        assert_eq!(AccountId::parse(all).unwrap().as_str(), all);
        assert_eq!(JobId::parse(all).unwrap().to_string(), all);
        for text in ["a/b", "a b", "a\u{0}"] {
            assert_eq!(
                JobId::parse(text),
                Err(IdError {
                    field: "job_id",
                    reason: "may contain only A-Z a-z 0-9 . _ : -"
                }),
                "{text:?}"
            );
        }
        assert_eq!(
            AccountId::parse("").unwrap_err().to_string(),
            "account_id: must be 1 to 128 characters"
        );
    }

    #[test]
    fn printable_ids_refuse_control_characters() {
        assert_eq!(
            WorkerId::parse("worker 7 / gpu").unwrap().as_str(),
            "worker 7 / gpu"
        );
        for text in ["a\nb", "\u{7f}", "tab\t"] {
            assert_eq!(
                WorkerId::parse(text),
                Err(IdError {
                    field: "worker_id",
                    reason: "must not contain control characters"
                }),
                "{text:?}"
            );
        }
        assert!(WorkerId::parse(&"w".repeat(255)).is_ok());
        assert!(WorkerId::parse(&"w".repeat(256)).is_err());
    }

    fn agrees(pattern: &str, parse: impl Fn(&str) -> bool, text: &str) {
        let re = regex::Regex::new(pattern).unwrap();
        assert_eq!(re.is_match(text), parse(text), "{pattern} on {text:?}");
    }

    proptest::proptest! {
        #[test]
        fn the_patterns_say_what_the_parsers_accept(
            text in "[a-z:_\\-. /\u{0}-\u{20}\u{7f}-\u{a0}é€😀]{0,130}",
            long in "[a-zé\u{9f}]{250,260}",
        ) {
            for t in [&text, &long] {
                agrees(AccountId::PATTERN, |t| AccountId::parse(t).is_ok(), t);
                agrees(JobId::PATTERN, |t| JobId::parse(t).is_ok(), t);
                agrees(IdempotencyKey::PATTERN, |t| IdempotencyKey::parse(t).is_ok(), t);
                agrees(WorkerId::PATTERN, |t| WorkerId::parse(t).is_ok(), t);
            }
        }
    }

    #[test]
    fn lengths_are_counted_in_characters_as_json_schema_does() {
        assert!(IdempotencyKey::parse(&"é".repeat(255)).is_ok());
        assert!(IdempotencyKey::parse(&"é".repeat(256)).is_err());
        assert_eq!(IdempotencyKey::MAX_CHARS, 255);
    }

    #[test]
    fn a_generated_job_id_is_kept_as_given() {
        let id = JobId::from_generated("0190f3a2-7c1e-7d2a-9b3c-123456789abc".into());
        assert_eq!(id.as_str(), "0190f3a2-7c1e-7d2a-9b3c-123456789abc");
        assert_eq!(id.to_string(), "0190f3a2-7c1e-7d2a-9b3c-123456789abc");
    }
}
