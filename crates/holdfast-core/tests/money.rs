//! Pins money: the bounds, the request parsers at both sides of each bound, formatting and
//! `Display`, and the checked arithmetic.

use holdfast_core::money::MICROS_PER_UNIT;
use holdfast_core::{MAX_BALANCE, MAX_REQUEST_AMOUNT, Micros, MoneyError};
use proptest::prelude::*;

#[test]
fn the_bounds_have_their_documented_values() {
    assert_eq!(MICROS_PER_UNIT, 1_000_000);
    assert_eq!(MAX_REQUEST_AMOUNT, Micros(1_000_000_000_000_000));
    assert_eq!(MAX_BALANCE, Micros(9_007_199_254_740_991));
    assert_eq!(MAX_BALANCE.0, (1i64 << 53) - 1);
}

#[test]
fn the_balance_bound_is_exact_in_a_double_on_both_sides() {
    for m in [MAX_BALANCE.0, -MAX_BALANCE.0] {
        assert_eq!(m as f64 as i64, m);
        assert_eq!((m as f64).to_string(), m.to_string());
    }
    // one past the bound is the first integer a double cannot hold next to its neighbour
    let past = MAX_BALANCE.0 + 2;
    assert_ne!(past as f64 as i64, past);
    assert_eq!(MAX_BALANCE.format(), "9007199254.740991");
    assert_eq!(Micros(-MAX_BALANCE.0).format(), "-9007199254.740991");
    assert_eq!(Micros::parse("9007199254.740991"), Ok(MAX_BALANCE));
}

#[test]
fn a_request_amount_may_be_exactly_the_maximum() {
    assert_eq!(Micros::parse_positive("1000000000"), Ok(MAX_REQUEST_AMOUNT));
    assert_eq!(
        Micros::parse_positive("1000000000.000000"),
        Ok(MAX_REQUEST_AMOUNT)
    );
    assert_eq!(
        Micros::parse_positive("1000000000.000001"),
        Err(MoneyError::TooLarge)
    );
    assert_eq!(
        Micros::parse_positive("999999999.999999"),
        Ok(Micros(999_999_999_999_999))
    );
}

#[test]
fn a_request_amount_is_more_than_zero() {
    assert_eq!(Micros::parse_positive("0.000001"), Ok(Micros(1)));
    assert_eq!(Micros::parse_positive("12.5"), Ok(Micros(12_500_000)));
    assert_eq!(Micros::parse_positive("0"), Err(MoneyError::NotPositive));
    assert_eq!(
        Micros::parse_positive("0.000000"),
        Err(MoneyError::NotPositive)
    );
    assert_eq!(Micros::parse_positive("x"), Err(MoneyError::Malformed));
}

#[test]
fn a_non_negative_amount_may_be_zero_or_the_maximum() {
    assert_eq!(Micros::parse_non_negative("0"), Ok(Micros(0)));
    assert_eq!(Micros::parse_non_negative("0.00"), Ok(Micros(0)));
    assert_eq!(Micros::parse_non_negative("0.25"), Ok(Micros(250_000)));
    assert_eq!(
        Micros::parse_non_negative("1000000000"),
        Ok(MAX_REQUEST_AMOUNT)
    );
    assert_eq!(
        Micros::parse_non_negative("999999999"),
        Ok(Micros(999_999_999_000_000))
    );
    assert_eq!(
        Micros::parse_non_negative("1000000000.000001"),
        Err(MoneyError::TooLarge)
    );
    assert_eq!(Micros::parse_non_negative("-1"), Err(MoneyError::Malformed));
    assert_eq!(Micros::parse_non_negative(""), Err(MoneyError::Empty));
}

#[test]
fn parse_reads_every_digit_in_place() {
    assert_eq!(Micros::parse("123.456789"), Ok(Micros(123_456_789)));
    assert_eq!(Micros::parse("9.9"), Ok(Micros(9_900_000)));
    assert_eq!(Micros::parse("1.01"), Ok(Micros(1_010_000)));
    assert_eq!(Micros::parse("70"), Ok(Micros(70_000_000)));
    assert_eq!(Micros::parse("9223372036854.775807"), Ok(Micros(i64::MAX)));
    assert_eq!(Micros::parse("1.a"), Err(MoneyError::Malformed));
    assert_eq!(Micros::parse("a.1"), Err(MoneyError::Malformed));
    assert_eq!(Micros::parse("10.1234567"), Err(MoneyError::TooPrecise));
    assert_eq!(Micros::parse("00.5"), Err(MoneyError::LeadingZero));
    assert_eq!(Micros::parse("0.5"), Ok(Micros(500_000)));
}

#[test]
fn format_trims_to_what_the_amount_needs() {
    for (m, text) in [
        (0, "0.00"),
        (1, "0.000001"),
        (10, "0.00001"),
        (100_000, "0.10"),
        (120_000, "0.12"),
        (123_000, "0.123"),
        (1_000_000, "1.00"),
        (-1, "-0.000001"),
        (-1_500_000, "-1.50"),
        (12_345_678_901, "12345.678901"),
        (i64::MAX, "9223372036854.775807"),
        (i64::MIN, "-9223372036854.775808"),
    ] {
        assert_eq!(Micros(m).format(), text, "{m}");
    }
}

#[test]
fn display_writes_the_formatted_amount() {
    assert_eq!(Micros(-1_500_000).to_string(), "-1.50");
    assert_eq!(Micros(250).to_string(), "0.00025");
    assert_eq!(format!("[{}]", Micros(0)), "[0.00]");
}

#[test]
fn arithmetic_is_checked() {
    assert_eq!(Micros(5).checked_add(Micros(7)), Some(Micros(12)));
    assert_eq!(Micros(i64::MAX).checked_add(Micros(1)), None);
    assert_eq!(Micros(5).checked_sub(Micros(7)), Some(Micros(-2)));
    assert_eq!(Micros(i64::MIN).checked_sub(Micros(1)), None);
    assert_eq!(Micros(100).times(3_600), Some(Micros(360_000)));
    assert_eq!(Micros(i64::MAX).times(2), None);
}

proptest! {
    #[test]
    fn display_is_format(m: i64) {
        prop_assert_eq!(Micros(m).to_string(), Micros(m).format());
    }

    #[test]
    fn format_then_parse_round_trips_and_keeps_order(a in 0i64..=i64::MAX, b in 0i64..=i64::MAX) {
        let pa = Micros::parse(&Micros(a).format()).unwrap();
        let pb = Micros::parse(&Micros(b).format()).unwrap();
        prop_assert_eq!(pa, Micros(a));
        prop_assert_eq!(pa.cmp(&pb), a.cmp(&b));
    }

    #[test]
    fn a_negative_amount_formats_as_its_absolute_value_with_a_minus(m in 1i64..=i64::MAX) {
        prop_assert_eq!(Micros(-m).format(), format!("-{}", Micros(m).format()));
    }

    #[test]
    fn the_request_parsers_agree_with_the_bound(m in 0i64..=2 * MAX_REQUEST_AMOUNT.0) {
        let text = Micros(m).format();
        let in_range = m <= MAX_REQUEST_AMOUNT.0;
        prop_assert_eq!(
            Micros::parse_non_negative(&text),
            if in_range { Ok(Micros(m)) } else { Err(MoneyError::TooLarge) }
        );
        prop_assert_eq!(
            Micros::parse_positive(&text),
            if !in_range {
                Err(MoneyError::TooLarge)
            } else if m == 0 {
                Err(MoneyError::NotPositive)
            } else {
                Ok(Micros(m))
            }
        );
    }

    #[test]
    fn checked_arithmetic_is_i64s(a: i64, b: i64, s in -1_000_000i64..1_000_000) {
        prop_assert_eq!(Micros(a).checked_add(Micros(b)), a.checked_add(b).map(Micros));
        prop_assert_eq!(Micros(a).checked_sub(Micros(b)), a.checked_sub(b).map(Micros));
        prop_assert_eq!(Micros(a).times(s), a.checked_mul(s).map(Micros));
    }
}
