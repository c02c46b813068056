//! Reconciliation's rules: when a pocket disagrees with its ledger, the one entry that
//! explains the difference; and which stored figures drifted from their sources (reported,
//! never adjusted).

use crate::ratecard::MONEY;

/// A pocket as stored and as its ledger tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PocketBooks {
    /// The amount stored on the pocket (the balance, or an allowance's remaining).
    pub stored: i64,
    /// The sum of the pocket's ledger entries.
    pub ledger_sum: i64,
    /// The `amount_after` of its last entry, if it has one.
    pub last_amount_after: Option<i64>,
}

/// What reconciliation does with a pocket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reconciled {
    /// The stored amount is the ledger's sum and its last entry's amount after.
    Agrees,
    /// One `adjustment` entry of this delta (stored − ledger sum), its amount after the
    /// stored amount, explains the difference: the stored amount is never edited.
    Adjust { delta: i64 },
    /// The difference does not fit in 64 bits: corrupt books, nothing to write.
    Overflows,
}

impl PocketBooks {
    pub fn reconcile(self) -> Reconciled {
        let agrees = self.stored == self.ledger_sum
            && self.last_amount_after.is_none_or(|a| a == self.stored);
        if agrees {
            return Reconciled::Agrees;
        }
        match self.stored.checked_sub(self.ledger_sum) {
            Some(delta) => Reconciled::Adjust { delta },
            None => Reconciled::Overflows,
        }
    }
}

/// A stored figure that disagrees with its source: `what` (`held`, `total_credited`,
/// `total_spent`), the stored value and the source's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drift {
    pub what: &'static str,
    pub stored: i64,
    pub source: i64,
}

/// A pocket's figures beside their sources: its held amount beside its open jobs' holds;
/// for money, the account's counters beside the ledger's credits and spending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PocketFigures<'p> {
    pub pocket: &'p str,
    pub held: i64,
    pub open_held: i64,
    /// (stored, ledger) of `total_credited` and of `total_spent`; read for money only.
    pub credited: (i64, i64),
    pub spent: (i64, i64),
}

impl PocketFigures<'_> {
    /// The figures that drifted, in the order held, total_credited, total_spent.
    pub fn drifts(&self) -> Vec<Drift> {
        let mut checks = vec![("held", self.held, self.open_held)];
        if self.pocket == MONEY {
            checks.push(("total_credited", self.credited.0, self.credited.1));
            checks.push(("total_spent", self.spent.0, self.spent.1));
        }
        drifts_of(checks)
    }
}

/// A credit block's figures beside their sources, each `(stored, source)`: its remaining
/// beside the signed sum of the ledger lines that name it, its held beside its open jobs'
/// hold lines. A block is a breakdown of the balance, as held is: a drift is reported,
/// not adjusted (the money pocket's own total is adjusted by its ledger).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockFigures {
    pub remaining: (i64, i64),
    pub held: (i64, i64),
}

impl BlockFigures {
    pub fn drifts(&self) -> Vec<Drift> {
        drifts_of(vec![
            ("block_remaining", self.remaining.0, self.remaining.1),
            ("block_held", self.held.0, self.held.1),
        ])
    }
}

fn drifts_of(checks: Vec<(&'static str, i64, i64)>) -> Vec<Drift> {
    checks
        .into_iter()
        .filter(|(_, stored, source)| stored != source)
        .map(|(what, stored, source)| Drift {
            what,
            stored,
            source,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_drifts_where_remaining_or_held_disagree_with_their_sources() {
        let agrees = BlockFigures {
            remaining: (500, 500),
            held: (100, 100),
        };
        assert!(agrees.drifts().is_empty());
        let both = BlockFigures {
            remaining: (500, 400),
            held: (0, 100),
        };
        let what: Vec<_> = both
            .drifts()
            .iter()
            .map(|d| (d.what, d.stored, d.source))
            .collect();
        assert_eq!(
            what,
            [("block_remaining", 500, 400), ("block_held", 0, 100)]
        );
    }

    fn books(stored: i64, ledger_sum: i64, last: Option<i64>) -> Reconciled {
        PocketBooks {
            stored,
            ledger_sum,
            last_amount_after: last,
        }
        .reconcile()
    }

    #[test]
    fn a_pocket_that_disagrees_is_explained_by_one_adjustment_of_the_difference() {
        assert_eq!(books(500, 500, Some(500)), Reconciled::Agrees);
        assert_eq!(books(0, 0, None), Reconciled::Agrees, "no entries yet");
        assert_eq!(books(507, 500, Some(500)), Reconciled::Adjust { delta: 7 });
        assert_eq!(books(493, 500, None), Reconciled::Adjust { delta: -7 });
        // The sum agrees but the last entry says another amount: a zero adjustment
        // restates it, so the chain of amounts after holds again.
        assert_eq!(books(500, 500, Some(400)), Reconciled::Adjust { delta: 0 });
        assert_eq!(books(i64::MIN, 1, None), Reconciled::Overflows);
        assert_eq!(books(i64::MAX, -1, None), Reconciled::Overflows);
    }

    #[test]
    fn held_drifts_on_every_pocket_and_the_counters_on_money_only() {
        let figures = |pocket| PocketFigures {
            pocket,
            held: 10,
            open_held: 12,
            credited: (100, 90),
            spent: (5, 5),
        };
        let found = |f: PocketFigures| f.drifts().into_iter().map(|d| d.what).collect::<Vec<_>>();
        assert_eq!(found(figures(MONEY)), ["held", "total_credited"]);
        assert_eq!(found(figures("daily_images")), ["held"]);
        let agreeing = PocketFigures {
            open_held: 10,
            credited: (90, 90),
            ..figures(MONEY)
        };
        assert_eq!(found(agreeing), Vec::<&str>::new());
        let d = figures(MONEY).drifts()[1];
        assert_eq!((d.stored, d.source), (100, 90));
    }
}
