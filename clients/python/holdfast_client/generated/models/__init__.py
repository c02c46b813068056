"""Contains all the data models used in inputs/outputs"""

from .account_body import AccountBody
from .account_body_allowances import AccountBodyAllowances
from .account_page_body import AccountPageBody
from .allowance_body import AllowanceBody
from .audit_body import AuditBody
from .balance_at_body import BalanceAtBody
from .balance_at_body_allowances import BalanceAtBodyAllowances
from .ban_body import BanBody
from .ban_request import BanRequest
from .block_at_body import BlockAtBody
from .block_body import BlockBody
from .block_line_body import BlockLineBody
from .block_request import BlockRequest
from .blocks_body import BlocksBody
from .capture_line_type_0 import CaptureLineType0
from .capture_line_type_1 import CaptureLineType1
from .complete_batch_request import CompleteBatchRequest
from .complete_item import CompleteItem
from .complete_request import CompleteRequest
from .credit_category import CreditCategory
from .customer_body import CustomerBody
from .customer_request import CustomerRequest
from .dead_delivery_body import DeadDeliveryBody
from .dead_delivery_page import DeadDeliveryPage
from .debit_batch_request import DebitBatchRequest
from .debit_batch_results import DebitBatchResults
from .debit_item_result import DebitItemResult
from .debit_item_type_0 import DebitItemType0
from .debit_item_type_1 import DebitItemType1
from .debit_request_type_0 import DebitRequestType0
from .debit_request_type_1 import DebitRequestType1
from .empty import Empty
from .error_body import ErrorBody
from .error_detail import ErrorDetail
from .event_body import EventBody
from .event_body_data import EventBodyData
from .event_body_type import EventBodyType
from .event_page import EventPage
from .export_ledger_kind import ExportLedgerKind
from .fail_batch_request import FailBatchRequest
from .fail_item import FailItem
from .fail_request import FailRequest
from .grant_request import GrantRequest
from .health_body import HealthBody
from .heartbeat_body import HeartbeatBody
from .heartbeat_request import HeartbeatRequest
from .job_actors_body import JobActorsBody
from .job_batch_results import JobBatchResults
from .job_body import JobBody
from .job_body_status import JobBodyStatus
from .job_item_result import JobItemResult
from .job_kind_spend_body import JobKindSpendBody
from .job_refund_body import JobRefundBody
from .job_refund_request import JobRefundRequest
from .lease_batch_body import LeaseBatchBody
from .lease_body import LeaseBody
from .lease_request import LeaseRequest
from .ledger_entry_body import LedgerEntryBody
from .ledger_entry_body_kind import LedgerEntryBodyKind
from .ledger_page import LedgerPage
from .list_accounts_status import ListAccountsStatus
from .list_events_type import ListEventsType
from .meter_spend_body import MeterSpendBody
from .money_result_body import MoneyResultBody
from .openapi_response_200 import OpenapiResponse200
from .pass_body import PassBody
from .pocket_at_body import PocketAtBody
from .pocket_line import PocketLine
from .put_account_request import PutAccountRequest
from .recharge_body import RechargeBody
from .recharge_request import RechargeRequest
from .redeliver_body import RedeliverBody
from .redeliver_request import RedeliverRequest
from .refund_request import RefundRequest
from .spend_body import SpendBody
from .spend_period_name import SpendPeriodName
from .spend_request_type_0 import SpendRequestType0
from .spend_request_type_1 import SpendRequestType1
from .statement_body import StatementBody
from .statement_line_body import StatementLineBody
from .stripe_answer import StripeAnswer
from .stripe_event import StripeEvent
from .submit_request import SubmitRequest
from .top_up_kind import TopUpKind
from .top_up_request import TopUpRequest
from .usage_body import UsageBody
from .usage_group_body import UsageGroupBody
from .usage_group_by import UsageGroupBy
from .usage_request import UsageRequest
from .violation_body import ViolationBody

__all__ = (
    "AccountBody",
    "AccountBodyAllowances",
    "AccountPageBody",
    "AllowanceBody",
    "AuditBody",
    "BalanceAtBody",
    "BalanceAtBodyAllowances",
    "BanBody",
    "BanRequest",
    "BlockAtBody",
    "BlockBody",
    "BlockLineBody",
    "BlockRequest",
    "BlocksBody",
    "CaptureLineType0",
    "CaptureLineType1",
    "CompleteBatchRequest",
    "CompleteItem",
    "CompleteRequest",
    "CreditCategory",
    "CustomerBody",
    "CustomerRequest",
    "DeadDeliveryBody",
    "DeadDeliveryPage",
    "DebitBatchRequest",
    "DebitBatchResults",
    "DebitItemResult",
    "DebitItemType0",
    "DebitItemType1",
    "DebitRequestType0",
    "DebitRequestType1",
    "Empty",
    "ErrorBody",
    "ErrorDetail",
    "EventBody",
    "EventBodyData",
    "EventBodyType",
    "EventPage",
    "ExportLedgerKind",
    "FailBatchRequest",
    "FailItem",
    "FailRequest",
    "GrantRequest",
    "HealthBody",
    "HeartbeatBody",
    "HeartbeatRequest",
    "JobActorsBody",
    "JobBatchResults",
    "JobBody",
    "JobBodyStatus",
    "JobItemResult",
    "JobKindSpendBody",
    "JobRefundBody",
    "JobRefundRequest",
    "LeaseBatchBody",
    "LeaseBody",
    "LeaseRequest",
    "LedgerEntryBody",
    "LedgerEntryBodyKind",
    "LedgerPage",
    "ListAccountsStatus",
    "ListEventsType",
    "MeterSpendBody",
    "MoneyResultBody",
    "OpenapiResponse200",
    "PassBody",
    "PocketAtBody",
    "PocketLine",
    "PutAccountRequest",
    "RechargeBody",
    "RechargeRequest",
    "RedeliverBody",
    "RedeliverRequest",
    "RefundRequest",
    "SpendBody",
    "SpendPeriodName",
    "SpendRequestType0",
    "SpendRequestType1",
    "StatementBody",
    "StatementLineBody",
    "StripeAnswer",
    "StripeEvent",
    "SubmitRequest",
    "TopUpKind",
    "TopUpRequest",
    "UsageBody",
    "UsageGroupBody",
    "UsageGroupBy",
    "UsageRequest",
    "ViolationBody",
)
