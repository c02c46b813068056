//! Money as integer micro-units. Decimal strings exist only at the edges: [`Micros::parse`]
//! and [`Micros::format`] are the two conversion functions, and [`MICROS_PER_UNIT`] is the
//! one place the factor appears.

use std::fmt;

use thiserror::Error;

/// One currency unit in micro-units. The only place this factor is written down.
pub const MICROS_PER_UNIT: i64 = 1_000_000;

/// Decimal digits after the point that a money string may carry.
const MAX_FRACTION_DIGITS: usize = 6;

/// The largest amount a request may carry: `"1000000000"` = 10^15 micros.
pub const MAX_REQUEST_AMOUNT: Micros = Micros(1_000_000_000 * MICROS_PER_UNIT);

/// What [`Micros::parse_positive`] accepts, as a regular expression (ECMA-262 and Python
/// `re` alike) for the OpenAPI document: more than zero, at most [`MAX_REQUEST_AMOUNT`],
/// at most 6 decimals, no leading zero. A test pins it to the parser.
pub const POSITIVE_AMOUNT_PATTERN: &str = concat!(
    r"^(?:[1-9][0-9]{0,8}(?:\.[0-9]{1,6})?|1000000000(?:\.0{1,6})?",
    r"|0\.(?:[1-9][0-9]{0,5}|0[1-9][0-9]{0,4}|00[1-9][0-9]{0,3}|000[1-9][0-9]{0,2}",
    r"|0000[1-9][0-9]?|00000[1-9]))$"
);

/// What [`Micros::parse_non_negative`] accepts: as [`POSITIVE_AMOUNT_PATTERN`], zero too.
pub const AMOUNT_PATTERN: &str =
    r"^(?:0(?:\.[0-9]{1,6})?|[1-9][0-9]{0,8}(?:\.[0-9]{1,6})?|1000000000(?:\.0{1,6})?)$";

/// Balances stay within ±(2^53 − 1) micros so JSON clients in any language read them exactly.
pub const MAX_BALANCE: Micros = Micros((1 << 53) - 1);

/// An amount of money in micro-units of the deployment's currency.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Micros(pub i64);

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MoneyError {
    #[error("amount is empty")]
    Empty,
    #[error("amount must be a plain decimal such as \"10.00\" (digits, at most one point)")]
    Malformed,
    #[error("amount has a leading zero")]
    LeadingZero,
    #[error("amount has more than 6 decimal places")]
    TooPrecise,
    #[error("amount is too large")]
    TooLarge,
    #[error("amount must be greater than zero")]
    NotPositive,
}

impl Micros {
    pub const ZERO: Micros = Micros(0);

    /// Parses `^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$` into micro-units. No sign, no exponent, no
    /// spaces, never rounds: a 7th decimal is an error.
    pub fn parse(text: &str) -> Result<Micros, MoneyError> {
        if text.is_empty() {
            return Err(MoneyError::Empty);
        }
        let (whole, fraction) = match text.split_once('.') {
            Some((w, f)) => (w, Some(f)),
            None => (text, None),
        };
        if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
            return Err(MoneyError::Malformed);
        }
        if whole.len() > 1 && whole.starts_with('0') {
            return Err(MoneyError::LeadingZero);
        }
        let mut micros: i64 = 0;
        for b in whole.bytes() {
            micros = micros
                .checked_mul(10)
                .and_then(|m| m.checked_add(i64::from(b - b'0')))
                .ok_or(MoneyError::TooLarge)?;
        }
        micros = micros
            .checked_mul(MICROS_PER_UNIT)
            .ok_or(MoneyError::TooLarge)?;
        if let Some(fraction) = fraction {
            if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                return Err(MoneyError::Malformed);
            }
            if fraction.len() > MAX_FRACTION_DIGITS {
                return Err(MoneyError::TooPrecise);
            }
            let mut frac: i64 = 0;
            for b in fraction.bytes() {
                frac = frac * 10 + i64::from(b - b'0');
            }
            for _ in fraction.len()..MAX_FRACTION_DIGITS {
                frac *= 10;
            }
            micros = micros.checked_add(frac).ok_or(MoneyError::TooLarge)?;
        }
        Ok(Micros(micros))
    }

    /// Parses an amount a request carries: as [`Micros::parse`], at most
    /// [`MAX_REQUEST_AMOUNT`], and greater than zero.
    pub fn parse_positive(text: &str) -> Result<Micros, MoneyError> {
        let m = Micros::parse(text)?;
        if m > MAX_REQUEST_AMOUNT {
            return Err(MoneyError::TooLarge);
        }
        if m.0 == 0 {
            return Err(MoneyError::NotPositive);
        }
        Ok(m)
    }

    /// Parses an amount that may be zero (a partial capture of nothing).
    pub fn parse_non_negative(text: &str) -> Result<Micros, MoneyError> {
        let m = Micros::parse(text)?;
        if m > MAX_REQUEST_AMOUNT {
            return Err(MoneyError::TooLarge);
        }
        Ok(m)
    }

    /// Formats as a decimal string with the fraction trimmed to what it needs (at least two
    /// places, like money usually reads): `-1.5` → `"-1.50"`, `250` micros → `"0.00025"`.
    pub fn format(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let per = MICROS_PER_UNIT.unsigned_abs();
        let whole = abs / per;
        let mut frac = format!("{:06}", abs % per);
        while frac.len() > 2 && frac.ends_with('0') {
            frac.pop();
        }
        format!("{sign}{whole}.{frac}")
    }

    pub fn checked_add(self, other: Micros) -> Option<Micros> {
        self.0.checked_add(other.0).map(Micros)
    }

    pub fn checked_sub(self, other: Micros) -> Option<Micros> {
        self.0.checked_sub(other.0).map(Micros)
    }

    /// Price of `seconds` at `per_second`, rounded up to the micro-unit. `per_second` is
    /// already in micros, so the product is exact; `None` on overflow.
    pub fn times(self, seconds: i64) -> Option<Micros> {
        self.0.checked_mul(seconds).map(Micros)
    }
}

/// An amount of a pocket for people: money as a decimal ([`Micros::format`]), an
/// allowance as its count of items.
pub fn pocket_amount(pocket: &str, amount: i64) -> String {
    if pocket == crate::ratecard::MONEY {
        Micros(amount).format()
    } else {
        amount.to_string()
    }
}

impl fmt::Display for Micros {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_documented_shapes() {
        assert_eq!(Micros::parse("10"), Ok(Micros(10_000_000)));
        assert_eq!(Micros::parse("10.00"), Ok(Micros(10_000_000)));
        assert_eq!(Micros::parse("0.000250"), Ok(Micros(250)));
        assert_eq!(Micros::parse("0"), Ok(Micros(0)));
        assert_eq!(Micros::parse("1000000000"), Ok(MAX_REQUEST_AMOUNT));
    }

    #[test]
    fn rejects_every_malformed_shape_with_a_reason() {
        for (text, why) in [
            ("", MoneyError::Empty),
            ("-1", MoneyError::Malformed),
            ("+1", MoneyError::Malformed),
            ("1e3", MoneyError::Malformed),
            (" 1", MoneyError::Malformed),
            ("1 ", MoneyError::Malformed),
            ("1.", MoneyError::Malformed),
            (".5", MoneyError::Malformed),
            ("1.2.3", MoneyError::Malformed),
            ("1,5", MoneyError::Malformed),
            ("01", MoneyError::LeadingZero),
            ("0.0000001", MoneyError::TooPrecise),
            ("99999999999999999999", MoneyError::TooLarge),
            ("9223372036854.775808", MoneyError::TooLarge),
        ] {
            assert_eq!(Micros::parse(text), Err(why), "{text:?}");
        }
        assert_eq!(Micros::parse_positive("0"), Err(MoneyError::NotPositive));
        assert_eq!(Micros::parse_positive("0.00"), Err(MoneyError::NotPositive));
        assert_eq!(
            Micros::parse_positive("1000000000.000001"),
            Err(MoneyError::TooLarge)
        );
    }

    #[test]
    fn formats_signed_amounts() {
        assert_eq!(Micros(-1_500_000).format(), "-1.50");
        assert_eq!(Micros(250).format(), "0.00025");
        assert_eq!(Micros(0).format(), "0.00");
        assert_eq!(Micros(i64::MIN).format(), "-9223372036854.775808");
    }

    proptest! {
        #[test]
        fn the_patterns_say_what_the_parsers_accept(text in "[0-9.]{1,13}") {
            let positive = regex::Regex::new(POSITIVE_AMOUNT_PATTERN).unwrap();
            let any = regex::Regex::new(AMOUNT_PATTERN).unwrap();
            prop_assert_eq!(positive.is_match(&text), Micros::parse_positive(&text).is_ok());
            prop_assert_eq!(any.is_match(&text), Micros::parse_non_negative(&text).is_ok());
        }

        #[test]
        fn the_patterns_accept_every_amount_a_request_may_carry(m in 0i64..=MAX_REQUEST_AMOUNT.0) {
            let text = Micros(m).format();
            prop_assert!(regex::Regex::new(AMOUNT_PATTERN).unwrap().is_match(&text), "{}", text);
            prop_assert_eq!(
                regex::Regex::new(POSITIVE_AMOUNT_PATTERN).unwrap().is_match(&text),
                m > 0
            );
        }

        #[test]
        fn format_then_parse_round_trips(m in 0i64..=i64::MAX) {
            prop_assert_eq!(Micros::parse(&Micros(m).format()), Ok(Micros(m)));
        }

        #[test]
        fn parse_then_format_is_canonical(whole in 0u64..1_000_000_000u64, frac in 0u32..1_000_000u32, digits in 1usize..=6) {
            let frac_text = format!("{frac:06}")[..digits].to_string();
            let text = format!("{whole}.{frac_text}");
            let m = Micros::parse(&text).unwrap();
            prop_assert_eq!(Micros::parse(&m.format()), Ok(m));
        }

        #[test]
        fn arbitrary_text_never_panics_and_accepts_only_the_grammar(text in "[-+0-9.eE ]{0,12}") {
            let ok = Micros::parse(&text).is_ok();
            let grammar = {
                let (w, f) = text.split_once('.').map_or((text.as_str(), None), |(w, f)| (w, Some(f)));
                !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) && (w == "0" || !w.starts_with('0'))
                    && f.is_none_or(|f| !f.is_empty() && f.len() <= 6 && f.bytes().all(|b| b.is_ascii_digit()))
            };
            prop_assert_eq!(ok, grammar);
        }
    }
}
