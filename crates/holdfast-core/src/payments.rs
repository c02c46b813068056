//! Money a payment provider reports, in the provider's units: what a payment of `amount`
//! minor units of a currency is in micros. Stripe (and most providers) count an amount in
//! the currency's smallest unit: cents for USD, whole yen for JPY, fils for KWD.

use crate::money::{MAX_REQUEST_AMOUNT, Micros};

/// Digits after the decimal point of a currency's smallest unit, as Stripe counts them
/// (its "zero-decimal" and "three-decimal" lists); every other currency has two.
pub fn minor_unit_digits(currency: &str) -> u32 {
    const ZERO: [&str; 16] = [
        "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV",
        "XAF", "XOF", "XPF",
    ];
    const THREE: [&str; 5] = ["BHD", "JOD", "KWD", "OMR", "TND"];
    let code = currency.to_ascii_uppercase();
    if ZERO.contains(&code.as_str()) {
        0
    } else if THREE.contains(&code.as_str()) {
        3
    } else {
        2
    }
}

/// `amount` minor units of `currency` in micros: `None` when it is not more than zero or
/// is more than a request may carry ([`MAX_REQUEST_AMOUNT`]).
pub fn micros_of_minor_units(currency: &str, amount: i64) -> Option<Micros> {
    let scale = 10_i64.pow(6 - minor_unit_digits(currency));
    amount
        .checked_mul(scale)
        .filter(|m| *m > 0 && *m <= MAX_REQUEST_AMOUNT.0)
        .map(Micros)
}

/// Whether a provider's currency code is the rate card's (ISO 4217 codes; Stripe writes
/// them in lower case, cards in upper).
pub fn same_currency(provider: &str, card: &str) -> bool {
    provider.eq_ignore_ascii_case(card)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cents_yen_and_fils_are_scaled_by_their_currency() {
        assert_eq!(
            micros_of_minor_units("usd", 2_000),
            Some(Micros(20_000_000))
        );
        assert_eq!(micros_of_minor_units("USD", 1), Some(Micros(10_000)));
        assert_eq!(micros_of_minor_units("jpy", 500), Some(Micros(500_000_000)));
        assert_eq!(micros_of_minor_units("kwd", 1_250), Some(Micros(1_250_000)));
    }

    #[test]
    fn nothing_negative_or_past_a_request_is_money() {
        assert_eq!(micros_of_minor_units("usd", 0), None);
        assert_eq!(micros_of_minor_units("usd", -100), None);
        assert_eq!(micros_of_minor_units("usd", i64::MAX), None);
        let most = MAX_REQUEST_AMOUNT.0 / 10_000;
        assert_eq!(micros_of_minor_units("usd", most), Some(MAX_REQUEST_AMOUNT));
        assert_eq!(micros_of_minor_units("usd", most + 1), None);
    }

    #[test]
    fn currencies_compare_without_case() {
        assert!(same_currency("usd", "USD"));
        assert!(!same_currency("eur", "USD"));
    }
}
