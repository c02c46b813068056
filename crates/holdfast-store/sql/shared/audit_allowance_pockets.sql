-- audit_allowance_pockets: every allowance pocket: what remains and what it holds.
SELECT account_id, pocket, remaining, held
FROM allowances
