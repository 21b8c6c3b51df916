"""First-class fakes for the primary Turn around a post-writeback dispatcher.

An orchestrator that runs a real Turn (provider lifecycle, host request, fake host, capped read,
validation, durable primary writeback, dispatch through the SUT seam, quota spend), a scheduler
with its governed admission, a sink that only a governed ticket may write to, and a guard that
refuses outbound network connections.
"""

from pwh._harness.network_guard import NetworkRefused as OutboundNetworkRefused
from pwh._harness.network_guard import OutboundGuard, refuse_outbound

from ._baseline import NoHooksSUT
from ._errors import FakeRejected
from ._host import (
    HOST_PHASES,
    HOST_RESULT_MAX_BYTES,
    REQUEST_FORBIDDEN_KEYS,
    FakeHost,
    HostRequestRejected,
    HostResultRejected,
    TurnPlan,
    ValidatedResult,
    build_host_request,
    make_host_result,
    read_host_output,
    validate_host_result,
)
from ._ids import SeededIds, StepClock
from ._orchestrator import (
    PRIMARY_CRASH_POINTS,
    FakeOrchestrator,
    RolloutLog,
    TurnResult,
    completion_output,
    progress_output,
    replan_output,
    snapshot_difference,
    spend_eligible,
)
from ._primary import PrimaryHandle, PrimaryStore, WritebackFailed
from ._providers import (
    CapabilityCatalog,
    CapabilityRecord,
    LifecycleRejected,
    ProviderRegistry,
    ProviderState,
    Resolution,
)
from ._scheduler import (
    AdmissionDecision,
    AdmissionTicket,
    FakeScheduler,
    GovernedAdmission,
    SchedulerEntry,
)
from ._sink import (
    FakeSink,
    SimulatedProviderCrash,
    SinkReceipt,
    SinkViolation,
    blind_retry_recover,
    recover_effect,
)

__all__ = [
    "NoHooksSUT",
    "FakeRejected",
    "HOST_PHASES",
    "HOST_RESULT_MAX_BYTES",
    "REQUEST_FORBIDDEN_KEYS",
    "FakeHost",
    "HostRequestRejected",
    "HostResultRejected",
    "TurnPlan",
    "ValidatedResult",
    "build_host_request",
    "make_host_result",
    "read_host_output",
    "validate_host_result",
    "SeededIds",
    "StepClock",
    "OutboundGuard",
    "OutboundNetworkRefused",
    "refuse_outbound",
    "PRIMARY_CRASH_POINTS",
    "FakeOrchestrator",
    "RolloutLog",
    "TurnResult",
    "completion_output",
    "progress_output",
    "replan_output",
    "snapshot_difference",
    "spend_eligible",
    "PrimaryHandle",
    "PrimaryStore",
    "WritebackFailed",
    "CapabilityCatalog",
    "CapabilityRecord",
    "LifecycleRejected",
    "ProviderRegistry",
    "ProviderState",
    "Resolution",
    "AdmissionDecision",
    "AdmissionTicket",
    "FakeScheduler",
    "GovernedAdmission",
    "SchedulerEntry",
    "FakeSink",
    "SimulatedProviderCrash",
    "SinkReceipt",
    "SinkViolation",
    "blind_retry_recover",
    "recover_effect",
]
