//! Input at the boundary: each argument parsed once into its domain type, and every error
//! in the store's words — `invalid_request: …` saying which argument and what is wrong, a
//! refusal as `<code>: <message>`.

use holdfast::{AccountId, IdempotencyKey, Micros, StoreError};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Bad input: `invalid_request: <what>`.
pub fn invalid(what: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("invalid_request: {what}")
}

/// A store error as one line starting with its stable code where it has one.
pub fn coded(e: StoreError) -> anyhow::Error {
    match e {
        StoreError::Refused(r) => anyhow::anyhow!("{}: {r}", r.code()),
        StoreError::Unavailable(_) | StoreError::DiskFull(_) => {
            anyhow::anyhow!("database_unavailable: {e}")
        }
        other => anyhow::Error::new(other),
    }
}

/// `Result<T, StoreError>` → `anyhow::Result<T>` with the code.
pub trait Coded<T> {
    fn coded(self) -> anyhow::Result<T>;
}

impl<T> Coded<T> for Result<T, StoreError> {
    fn coded(self) -> anyhow::Result<T> {
        self.map_err(coded)
    }
}

pub fn account(text: &str) -> anyhow::Result<AccountId> {
    AccountId::parse(text).map_err(|e| invalid(format!("account id {text:?}: {}", e.reason)))
}

pub fn key(flag: &str, text: &str) -> anyhow::Result<IdempotencyKey> {
    IdempotencyKey::parse(text).map_err(|e| invalid(format!("{flag} {text:?}: {}", e.reason)))
}

/// A positive amount: a plain decimal with at most 6 places, never rounded.
pub fn amount(text: &str) -> anyhow::Result<Micros> {
    Micros::parse_positive(text).map_err(|e| invalid(format!("amount {text:?}: {e}")))
}

/// A positive whole number of seconds.
pub fn seconds(text: &str) -> anyhow::Result<i64> {
    match text.parse::<i64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(invalid(format!(
            "--seconds {text:?}: must be a positive whole number"
        ))),
    }
}

/// An RFC 3339 time (`2026-01-31T00:00:00Z`) as micros since the epoch.
pub fn time(flag: &str, text: &str) -> anyhow::Result<i64> {
    let t = OffsetDateTime::parse(text, &Rfc3339).map_err(|e| {
        invalid(format!(
            "{flag} {text:?}: not an RFC 3339 time such as 2026-01-31T00:00:00Z ({e})"
        ))
    })?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000)
        .map_err(|_| invalid(format!("{flag} {text:?}: out of range")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_say_what_is_wrong() {
        let e = amount("1.0000001").unwrap_err().to_string();
        assert!(
            e.starts_with("invalid_request: amount \"1.0000001\""),
            "{e}"
        );
        assert!(e.contains("more than 6 decimal places"), "{e}");
        assert!(
            amount("0")
                .unwrap_err()
                .to_string()
                .contains("greater than zero")
        );
        assert_eq!(amount("2.5").unwrap(), Micros(2_500_000));
    }

    #[test]
    fn times_parse_rfc3339_only() {
        assert_eq!(time("--t", "1970-01-01T00:00:01Z").unwrap(), 1_000_000);
        assert_eq!(time("--t", "1970-01-01T01:00:01+01:00").unwrap(), 1_000_000);
        assert!(time("--t", "yesterday").is_err());
    }

    #[test]
    fn seconds_are_positive_integers() {
        assert_eq!(seconds("30").unwrap(), 30);
        for bad in ["0", "-1", "1.5", "x"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
    }
}
