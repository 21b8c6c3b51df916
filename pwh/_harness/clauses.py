"""The clauses an RFC check may cite: section, the source's own words that decide, an English gloss.

A check is RFC only where one of these clauses requires it (``expect(..., rfc="§9.replay-noop")``);
a check with no clause here is pwh's reading and must be filed as profile. ``expect`` refuses a
citation that is not in this table, and ``tests/harness/test_clauses.py`` reads every citation in
the step library, so a check cannot cite a pwh rule id, a design choice or a clause nobody wrote
down. The quotes are verbatim from the two source documents (the RFC and seed 003, both in
Chinese; " | " separates cells of one table row, "……" marks words left out); the gloss is pwh's
translation, and where the two differ, the quote decides.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLAUSES", "CLAUSES_BY_ID", "Clause", "UnknownClause", "cite", "citation_ids"]

_RFC = "RFC Provider-Neutral Post-Writeback Capability Hooks v0"
_SEED = "Seed 003: Capability, Provider and Host"


@dataclass(frozen=True)
class Clause:
    id: str
    document: str
    section: str
    quote: str
    gloss: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "document": self.document, "section": self.section, "quote": self.quote, "gloss": self.gloss}


def _r(cid: str, section: str, quote: str, gloss: str) -> Clause:
    return Clause(cid, _RFC, section, quote, gloss)


def _s(cid: str, section: str, quote: str, gloss: str) -> Clause:
    return Clause(cid, _SEED, section, quote, gloss)


CLAUSES: tuple[Clause, ...] = (
    # -- RFC §1 decision summary ----------------------------------------------------------------
    _r(
        "§1.no-effect",
        "§1",
        "Proposal 不执行外部 effect。Core 对其验证后写入有边界的 sidecar journal 或 outbox。之后必须由另一个 governed executor 根据自身 capability、write scope、 budget 与授权策略重新准入，才允许发生任何 effect。",
        "A proposal performs no external effect. Core validates it and writes it to a bounded sidecar journal; "
        "only a separate governed executor, re-admitting it under its own capability, write scope, budget and "
        "authorisation, may cause any effect.",
    ),
    _r(
        "§1.journaled",
        "§1",
        "已安装 hook 接收一份精简、public-safe 的 receipt projection，并可返回零个或多个 typed、幂等的 intent proposal。……Core 对其验证后写入有边界的 sidecar journal 或 outbox。",
        "An installed hook receives a compact, public-safe receipt projection and may return zero or more typed, "
        "idempotent intent proposals; core validates them and writes them to a bounded sidecar journal or outbox.",
    ),
    _r(
        "§1.failure-contained",
        "§1",
        "Hook 失败不得回滚主 writeback、阻止与之匹配的 quota spend、创建 user gate，也不得隐式继承主 Turn 的 write 权限。",
        "A hook failure must not roll back the primary writeback, block the matching quota spend, create a "
        "user gate, or implicitly inherit the primary Turn's write authority.",
    ),
    # -- §3.2 non-goals ------------------------------------------------------------------------
    _r(
        "§3.2.not-in-append-helper",
        "§3.2",
        "把 hook execution 放进 append_rollout_event_once 等底层持久化 helper",
        "A non-goal: running hooks inside the rollout-event append helper or another low-level persistence helper.",
    ),
    _r(
        "§3.2.no-primary-authority",
        "§3.2",
        "授予 hook 主 Turn 的仓库、网络、凭据、quota 或 write 权限",
        "A non-goal: granting a hook the primary Turn's repository, network, credential, quota or write authority.",
    ),
    _r(
        "§3.2.no-command-actions",
        "§3.2",
        "把现有 command 形态的 post_writeback_actions 解释成可信 extension 注册",
        "A non-goal: reading the existing command-shaped post_writeback_actions as trusted extension registrations.",
    ),
    _r(
        "§3.2.no-shell-hooks",
        "§3.2",
        "以任意 shell command、import string 或用户 callback 作为 hook 接口",
        "A non-goal: an arbitrary shell command, import string or user callback as the hook interface.",
    ),
    # -- §4 ownership ----------------------------------------------------------------------------
    _r(
        "§4.composition-root",
        "§4",
        "Composition root 可以注册已安装 provider，但“已安装”只证明 provider 可用且 contract 兼容，不证明它提出的 intent 已获执行授权。",
        "The composition root may register an installed provider; 'installed' proves only that the provider is "
        "available and contract-compatible, not that its intents are authorised for execution.",
    ),
    _r(
        "§4.no-capability-branch",
        "§4",
        "Core 不得按 capability identifier 分支。",
        "Core must not branch on a capability identifier.",
    ),
    # -- §5.1 a legal source --------------------------------------------------------------------
    _r(
        "§5.1.identity",
        "§5.1",
        "settlement identity 具有非空 goal、agent、Todo、Turn 与 effect identity；",
        "A dispatch is legal only if the settlement identity has non-empty goal, agent, Todo, Turn and effect identities.",
    ),
    _r(
        "§5.1.same-effect",
        "§5.1",
        "durable-writeback receipt 与当前 Turn settlement plan 使用相同 effect identity；",
        "... and the durable-writeback receipt uses the same effect identity as the current Turn's settlement plan.",
    ),
    _r(
        "§5.1.committed",
        "§5.1",
        "durable-writeback step 是 committed，而非 prepared、rejected、推断结果或仅存在于 prose；",
        "... and the durable-writeback step is committed: not prepared, rejected, inferred, or present only in prose.",
    ),
    _r(
        "§5.1.durable",
        "§5.1",
        "receipt 已完成足够强的 durable checkpoint，使 replay 能恢复同一 dispatch identity；",
        "... and the receipt has a durable checkpoint strong enough that replay recovers the same dispatch identity.",
    ),
    _r(
        "§5.1.enabled",
        "§5.1",
        "当前 execution profile 启用了 post-writeback hook。",
        "... and the current execution profile enables post-writeback hooks.",
    ),
    _r(
        "§5.1.rollout-not-authority",
        "§5.1",
        "成功 append diagnostic rollout event 不是权威来源。……diagnostic event 丢失不得改变主 settlement 的事实。",
        "A successfully appended diagnostic rollout event is not a source of authority; losing a diagnostic "
        "event must not change the facts of the primary settlement.",
    ),
    # -- §5.2 position ---------------------------------------------------------------------------
    _r(
        "§5.2.spend",
        "§5.2",
        "quota-spend eligibility 只依赖匹配的主 durable receipt；",
        "Quota-spend eligibility depends only on the matching primary durable receipt.",
    ),
    _r(
        "§5.2.sidecar-identity",
        "§5.2",
        "hook dispatch 有独立的 sidecar checkpoint 和 idempotency identity；",
        "A hook dispatch has its own sidecar checkpoint and idempotency identity.",
    ),
    _r(
        "§5.2.crash-replay",
        "§5.2",
        "primary writeback 后进程崩溃，仍能 replay 同一 hook dispatch；",
        "If the process crashes after the primary writeback, the same hook dispatch can still be replayed.",
    ),
    _r(
        "§5.2.receipt-kept",
        "§5.2",
        "hook 失败不删除、不改变主 receipt。",
        "A hook failure neither deletes nor changes the primary receipt.",
    ),
    # -- §6 registration -------------------------------------------------------------------------
    _r(
        "§6.validated-before-call",
        "§6",
        "Core 在调用 provider 之前校验 exact fields、有界 token arrays、已知 event/intent kind、无重复 identity、size/timeout limit，以及强制 isolate policy。",
        "Before calling any provider, core checks exact fields, bounded token arrays, known event/intent kinds, "
        "no duplicate identity, size/timeout limits, and the mandatory isolate policy.",
    ),
    _r(
        "§6.no-command-no-scope",
        "§6",
        "Registration 不声明可执行 command，也不声明 write scope。",
        "A registration declares neither an executable command nor a write scope.",
    ),
    _r(
        "§6.scope-is-request",
        "§6",
        "Intent proposal 可以声明未来 executor 所需的 scope，但这只是准入请求，不是 hook 已持有的权限。",
        "An intent may declare the scope a future executor needs, but that is only an admission request, not authority the hook holds.",
    ),
    _r(
        "§6.stable-order",
        "§6",
        "Registration 顺序不代表执行优先级。Core 按稳定 hook_id 排序后 dispatch。",
        "Registration order is not execution priority; core dispatches in stable hook_id order.",
    ),
    _r(
        "§6.no-hook-dependency",
        "§6",
        "V0 中 hook 不得依赖另一个 hook 的 result；",
        "In V0 no hook may depend on another hook's result.",
    ),
    # -- §7 input --------------------------------------------------------------------------------
    _r(
        "§7.immutable-input",
        "§7",
        "每个 admitted hook 接收一个 immutable loopx_post_writeback_hook_input_v0",
        "Each admitted hook receives an immutable loopx_post_writeback_hook_input_v0 (the shape §7 shows: "
        "dispatch_id, hook_id, capability_id, source, projection, boundary with six false flags).",
    ),
    _r(
        "§7.opaque-source",
        "§7",
        "Source identity 是 public-safe opaque identifier，不是 display name 或 raw provider payload。",
        "Source identities are public-safe opaque identifiers, not display names or raw provider payloads.",
    ),
    _r(
        "§7.bounded-projection",
        "§7",
        "Core 为每种 event kind 选择有界 projection schema；registration 不得请求完整 writeback payload。",
        "Core picks a bounded projection schema per event kind; a registration may not request the full writeback payload.",
    ),
    _r(
        "§7.input-excludes",
        "§7",
        "Input 必须排除 task prose、prompt、log、trajectory、transcript、credential、环境变量值、 local path、仓库内容和未注册外部引用。",
        "The input must exclude task prose, prompts, logs, trajectories, transcripts, credentials, environment "
        "variable values, local paths, repository content and unregistered external references.",
    ),
    _r(
        "§7.unproven-boundary",
        "§7",
        "如果 boundary 无法证明 projection 安全，则不调用该 hook，并生成隔离的 failure receipt。",
        "If the boundary cannot prove the projection safe, the hook is not called and an isolated failure receipt is produced.",
    ),
    # -- §8 typed intent result ------------------------------------------------------------------
    _r(
        "§8.result-shape",
        "§8",
        "要么是没有 intent 的 not_applicable，要么是带有界 intent list 的 proposed。",
        "A result is either not_applicable with no intent, or proposed with a bounded intent list.",
    ),
    _r(
        "§8.intent-matches",
        "§8",
        "hook、capability、dispatch 和 kind 与 admitted registration 匹配；",
        "Core accepts an intent only if its hook, capability, dispatch and kind match the admitted registration.",
    ),
    _r(
        "§8.within-budget",
        "§8",
        "序列化结果没有超过 budget；",
        "... and the serialized result does not exceed the budget.",
    ),
    _r(
        "§8.known-schema",
        "§8",
        "payload 使用该 intent kind 的已知 schema；",
        "... and the payload uses the known schema of its intent kind.",
    ),
    _r(
        "§8.identity-matches",
        "§8",
        "idempotency identity 与 semantic input 匹配；",
        "... and the idempotency identity matches the semantic input.",
    ),
    _r(
        "§8.no-claimed-effect",
        "§8",
        "没有宣称已执行外部写或获得新权限；",
        "... and it claims neither an external write performed nor new authority gained.",
    ),
    _r(
        "§8.scope-declared",
        "§8",
        "requested scope 仅作为未来 admission 的声明输入。",
        "... and a requested scope is only a declared input to a future admission.",
    ),
    _r(
        "§8.reducer-decides",
        "§8",
        "对 periodic report 而言，最小可用 intent 只请求 trigger evaluation。既有 capability-owned trigger reducer 继续拥有 promotion 判断。",
        "For periodic report the minimal intent only requests a trigger evaluation; the capability-owned trigger "
        "reducer keeps the promotion decision.",
    ),
    # -- §9 idempotency, replay, conflict --------------------------------------------------------
    _r(
        "§9.dispatch-id",
        "§9",
        "dispatch_id 是 committed receipt identity、hook identity、registration schema version 与 event kind 的稳定 digest。",
        "dispatch_id is a stable digest of the committed receipt identity, hook identity, registration schema version and event kind.",
    ),
    _r(
        "§9.intent-id",
        "§9",
        "intent_id 是 dispatch identity、intent kind、 policy version 与 canonical typed payload 的稳定 digest。",
        "intent_id is a stable digest of the dispatch identity, intent kind, policy version and canonical typed payload.",
    ),
    _r(
        "§9.replay-noop",
        "§9",
        "同一 dispatch 与同一 canonical result 的 replay 是 no-op，并返回原 receipt；",
        "A replay of the same dispatch with the same canonical result is a no-op and returns the original receipt.",
    ),
    _r(
        "§9.conflict",
        "§9",
        "同一 dispatch identity 产生不同 result 时判定冲突，拒绝新 result；",
        "A different result under the same dispatch identity is a conflict; the new result is rejected.",
    ),
    _r(
        "§9.new-identity",
        "§9",
        "registration、policy version 或 source receipt 改变时产生新 identity，不覆盖历史；",
        "A changed registration, policy version or source receipt yields a new identity; history is not overwritten.",
    ),
    _r(
        "§9.crash-retry",
        "§9",
        "primary writeback 与 sidecar checkpoint 之间崩溃时可重试同一 dispatch；",
        "After a crash between the primary writeback and the sidecar checkpoint, the same dispatch can be retried.",
    ),
    _r(
        "§9.no-rebuild",
        "§9",
        "completed sidecar receipt 不得从日志文本或 provider 自述中重建；",
        "A completed sidecar receipt must not be rebuilt from log text or from a provider's own account.",
    ),
    _r(
        "§9.executor-dedupe",
        "§9",
        "external executor 还要基于 intent_id 再次去重，因为 hook 记录与 effect 执行是两个事务。",
        "The external executor deduplicates again on intent_id, since recording and executing are two transactions.",
    ),
    _r(
        "§9.journal-contents",
        "§9",
        "Journal 只保存有界 typed packet 与精简 failure code，不保存 raw provider exception、 task context、credential 或 external payload。",
        "The journal keeps only bounded typed packets and compact failure codes: no raw provider exception, "
        "task context, credential or external payload.",
    ),
    # -- §10 supervision, budget, isolation ------------------------------------------------------
    _r(
        "§10.limits",
        "§10",
        "Core 对每个 hook 和每次 dispatch 施加 invocation count、intent count、bytes 与 wall time 上限。",
        "Core imposes invocation-count, intent-count, byte and wall-time limits on every hook and every dispatch.",
    ),
    _r(
        "§10.profile-gates",
        "§10",
        "Profile 可以关闭整个 phase，或只准入已安装 hook allowlist。",
        "A profile can turn the whole phase off, or admit only an allowlist of installed hooks.",
    ),
    _r(
        "§10.independent",
        "§10",
        "V0 按稳定顺序独立运行各 hook；一个 hook 失败不会消耗另一个 hook 的 result slot。",
        "V0 runs each hook independently in a stable order; one hook's failure does not use up another hook's result slot.",
    ),
    _r(
        "§10.failure-codes",
        "§10",
        "Failure receipt 使用稳定 code，例如：registration_rejected；input_boundary_rejected；producer_failed；producer_timed_out；result_contract_rejected；intent_conflict；dispatch_budget_exhausted。",
        "A failure receipt uses a stable code, for example the seven listed (registration_rejected ... dispatch_budget_exhausted).",
    ),
    _r(
        "§10.observable-retry",
        "§10",
        "失败可观察，也可在有界 policy 下用相同 dispatch identity 重试。",
        "A failure is observable, and may be retried under a bounded policy with the same dispatch identity.",
    ),
    _r(
        "§10.failure-never",
        "§10",
        "但它不：改变主 durable receipt；阻止匹配的 quota spend；改变 Todo state 或 selected work；创建 blocker 或 user-action gate；调用 external sink；消耗另一个 capability 的 quota。",
        "But a failure never: changes the primary durable receipt; blocks the matching quota spend; changes Todo "
        "state or selected work; creates a blocker or user-action gate; calls an external sink; spends another capability's quota.",
    ),
    # -- §11 Slice 2 -----------------------------------------------------------------------------
    _r(
        "§11.slice2",
        "§11",
        "在一个 orchestrator-owned durable-writeback receipt boundary 接入 dispatcher；持久化 sidecar dispatch receipt，并能在 replay 时恢复；证明 quota-spend eligibility 与主 receipt 不变；",
        "Slice 2 wires the dispatcher at one orchestrator-owned durable-writeback receipt boundary, persists the "
        "sidecar dispatch receipt and recovers it on replay, and shows quota-spend eligibility and the primary receipt unchanged.",
    ),
    # -- §12 the validation matrix ---------------------------------------------------------------
    _r(
        "§12.M01",
        "§12",
        "Phase disabled 或 capability 未安装 | Provider 零调用，无 sidecar intent",
        "Phase disabled or capability not installed: zero provider calls, no sidecar intent.",
    ),
    _r(
        "§12.M02",
        "§12",
        "Registration 非法或超过 budget | Provider 调用前拒绝 registration",
        "Registration invalid or over budget: rejected before any provider call.",
    ),
    _r(
        "§12.M03",
        "§12",
        "主 validation 或 writeback 失败 | Post-writeback 零调用",
        "Primary validation or writeback fails: zero post-writeback calls.",
    ),
    _r(
        "§12.M04",
        "§12",
        "Committed writeback | 每个 admitted hook 恰好一个 dispatch identity",
        "Committed writeback: exactly one dispatch identity per admitted hook.",
    ),
    _r(
        "§12.M05",
        "§12",
        "主 writeback replay | 返回同一 dispatch receipt，不重复 intent",
        "Primary writeback replayed: the same dispatch receipt returned, no duplicate intent.",
    ),
    _r(
        "§12.M06",
        "§12",
        "同一 identity、不同 payload | 冲突被拒绝，原 receipt 保留",
        "Same identity, different payload: the conflict rejected, the original receipt kept.",
    ),
    _r(
        "§12.M07",
        "§12",
        "Provider 抛错、超时或返回非法结果 | 精简隔离失败；主 receipt 与 spend eligibility 不变",
        "Provider raises, times out or returns an invalid result: a compact isolated failure; the primary receipt and spend eligibility unchanged.",
    ),
    _r(
        "§12.M08",
        "§12",
        "多 hook | 稳定顺序、独立 budget、故障隔离",
        "Several hooks: stable order, independent budgets, failure isolation.",
    ),
    _r(
        "§12.M09",
        "§12",
        "Intent 请求 scope | 只记录 proposal，不授予权限、不执行 effect",
        "Intent requests a scope: recorded as a proposal only, no authority granted, no effect executed.",
    ),
    _r(
        "§12.M10",
        "§12",
        "Periodic-report completion threshold | Fake scheduler 下产生一个 typed trigger-evaluation intent",
        "Periodic-report completion threshold: one typed trigger-evaluation intent, via the fake scheduler.",
    ),
    _r(
        "§12.M11",
        "§12",
        "Periodic-report replan transition | Fake scheduler 下产生一个 typed trigger-evaluation intent",
        "Periodic-report replan transition: one typed trigger-evaluation intent, via the fake scheduler.",
    ),
    _r(
        "§12.M12",
        "§12",
        "External-write 断言 | 单独 governed admission 前无网络或 sink 调用",
        "External-write assertion: no network or sink call before separate governed admission.",
    ),
    _r(
        "§12.M13",
        "§12",
        "Public-boundary scan | 无私有名称、URL、路径、credential、transcript、raw log 或 provider payload",
        "Public-boundary scan: no private names, URLs, paths, credentials, transcripts, raw logs or provider payloads.",
    ),
    _r(
        "§12.e2e",
        "§12",
        "E2E acceptance test 必须从真实 committed completion/replan writeback boundary 开始，不能直接调用 periodic-report producer；它结束于 validated intent receipt，不结束于外部服务。",
        "The end-to-end acceptance test starts from a real committed completion/replan writeback boundary, never by "
        "calling the periodic-report producer directly, and ends at the validated intent receipt, not at an external service.",
    ),
    # -- §13 rejected alternatives ---------------------------------------------------------------
    _r(
        "§13.no-direct-sink",
        "§13",
        "让 hook 直接调用 sink：这会合并策略与 effect 权威，绕过 write-scope admission/readback，并让重试不安全。",
        "Rejected: letting a hook call a sink directly; it merges policy and effect authority, bypasses "
        "write-scope admission and readback, and makes retries unsafe.",
    ),
    _r(
        "§13.not-a-settlement-step",
        "§13",
        "把 hook 增加为主 settlement step：可选 provider 的健康状态会支配 quota accounting 与 Turn completion。",
        "Rejected: a hook as a primary settlement step; an optional provider's health would govern quota accounting and Turn completion.",
    ),
    # -- §14 open choices ------------------------------------------------------------------------
    _r(
        "§14.atomic-dedupe",
        "§14",
        "无论选择哪种，都必须保持 atomic per-dispatch dedupe，并可从 committed receipt 恢复；",
        "Wherever the sidecar journal lives, it must keep atomic per-dispatch dedupe and be recoverable from the committed receipt.",
    ),
    _r(
        "§14.either-path",
        "§14",
        "host 在 checkpoint 后立即 dispatch，还是从 recovery queue dispatch；两者必须保持相同 identity、故障隔离与主 spend 语义。",
        "Whether the host dispatches right after the checkpoint or from a recovery queue, both keep the same "
        "identity, failure isolation and primary spend semantics.",
    ),
    # -- seed 003 --------------------------------------------------------------------------------
    _s(
        "seed003.lifecycle",
        "§4 Provider lifecycle",
        "先声明，才可安装 | 不能“已安装但未声明” | 不能“已启用但未安装” | 不能“已就绪但未启用”",
        "Declared before installed; never installed-but-undeclared, enabled-but-uninstalled, or ready-but-not-enabled.",
    ),
    _s(
        "seed003.experiment-a",
        "§6 experiment A",
        "enabled=true, installed=false 与 installed=true, declared=false 都应在 registry 阶段被拒，不能等运行时失败。",
        "enabled=true with installed=false, and installed=true with declared=false, are both rejected at registration, not at run time.",
    ),
    _s(
        "seed003.roles",
        "§2",
        "Host 不可以直接写 canonical state；Provider 不可以绕过 validation 和 settlement",
        "A host may not write canonical state directly; a provider may not bypass validation and settlement.",
    ),
    _s(
        "seed003.host-request",
        "§6 experiment B",
        "Host 请求只包含前两阶段可完成的内容，以及 scope、输出 schema、证据要求、停止条件；不能携带内核私有写入口。",
        "The host request holds only what the first two phases can complete, plus scope, output schema, evidence "
        "requirements and stop conditions; never a private core write entry.",
    ),
    _s(
        "seed003.request-contract",
        "§4 contracts",
        "Host request | route、Todo、gate、输出 schema、resume 条件 | 让 Host 自己扩大 scope",
        "A host request states route, Todo, gate, output schema and resume conditions; it never lets the host widen its own scope.",
    ),
    _s(
        "seed003.completed-phases",
        "§4 hard constraints",
        "completed_phases 只能是 host_execute 与 typed_result，不能声称 validation、writeback 或 spend 已完成。",
        "completed_phases may only be host_execute and typed_result; a host cannot claim validation, writeback or spend.",
    ),
    _s(
        "seed003.completion-lifecycle",
        "§4 hard constraints",
        "validated_completion 必须带 lifecycle adapter、后继/active goal 或 no_followup 的完整意图。",
        "validated_completion must carry a lifecycle adapter and a complete successor / active-goal / no_followup intent.",
    ),
    _s(
        "seed003.experiment-c",
        "§6 experiment C",
        "带 validated_completion 却缺 lifecycle adapter 或后继意图时应 validation 失败，不能降级成 progress 或静默成功。",
        "A validated_completion missing the lifecycle adapter or successor intent fails validation; never downgraded to progress or silent success.",
    ),
    _s(
        "seed003.non-material",
        "§4 hard constraints",
        "非 material result 不能夹带 evidence、path delta 或 progress observation",
        "A non-material result carries no evidence, path delta or progress observation.",
    ),
    _s(
        "seed003.read-cap",
        "§4 hard constraints",
        "Host result 有 HOST_RESULT_MAX_BYTES = 12_000 的读取上限，超大输出不能直接变成事实。",
        "Host results are read with a 12,000-byte cap; oversized output never becomes fact directly.",
    ),
    _s(
        "seed003.experiment-d",
        "§6 experiment D",
        "超过 12,000 字节的输出应明确报错或形成可诊断失败，不能把半截 JSON 当完整 typed result。",
        "Output over 12,000 bytes is an explicit error or a diagnosable failure, never half a JSON taken as a whole typed result.",
    ),
    _s(
        "seed003.binding",
        "§4 hard constraints",
        "结果必须绑定同一个 turn_key 与 effect_ref，不能把另一轮的 receipt 拼进来。",
        "A result is bound to the same turn_key and effect_ref; another Turn's receipt may not be spliced in.",
    ),
    _s(
        "seed003.readback-first",
        "§8 answer 6",
        "必须先通过 readback/journal 判断 effect 是否存在，再走幂等恢复。",
        "After a crash following a provider's call, readback/journal first decides whether the effect exists, then idempotent recovery.",
    ),
    _s(
        "seed003.FT-1",
        "§7 failure table",
        "Provider 未安装 | 注册表与安装状态 | 安装并重新探测，禁用跳过",
        "Provider not installed: install and re-probe; skipping is forbidden.",
    ),
    _s(
        "seed003.FT-2",
        "§7 failure table",
        "Provider 未 ready | 健康检查/依赖 | 修复依赖，走 capability gate",
        "Provider not ready: repair dependencies through the capability gate.",
    ),
    _s(
        "seed003.FT-3",
        "§7 failure table",
        "Host 越权声明阶段 | Host result 与计划 | validation 拒绝，保留 journal",
        "Host overclaims phases: validation rejects, the journal is kept.",
    ),
    _s(
        "seed003.FT-4",
        "§7 failure table",
        "completion 无 lifecycle | typed result | 改为合法 progress 或补齐后继合同",
        "Completion without lifecycle: change to a legal progress or complete the follow-up contract.",
    ),
    _s(
        "seed003.FT-5",
        "§7 failure table",
        "非 material 却带证据 | result schema | 拒绝夹带，重出 typed result",
        "Non-material with evidence: refuse the smuggled fields; re-issue a typed result.",
    ),
    _s(
        "seed003.FT-6",
        "§7 failure table",
        "Host 输出过大 | executor 边界 | 让 Host 缩小输出或保存引用",
        "Host output too large: the host shrinks its output or saves a reference.",
    ),
    _s(
        "seed003.FT-7",
        "§7 failure table",
        "Provider 调用后崩溃 | effect/readback receipt | 先读回，禁止盲目重复副作用",
        "Crash after a provider call: read back first; never blindly repeat the side effect.",
    ),
)

CLAUSES_BY_ID: dict[str, Clause] = {c.id: c for c in CLAUSES}


class UnknownClause(TypeError):
    """An RFC check cited something that is not in the clause table: a harness bug, refused at once."""


def citation_ids(rfc: str | tuple[str, ...]) -> tuple[str, ...]:
    """The clause ids an ``rfc=`` citation names; raises :class:`UnknownClause` for any other."""
    ids = (rfc,) if isinstance(rfc, str) else tuple(rfc)
    if not ids:
        raise UnknownClause("an RFC check cites no clause")
    unknown = [i for i in ids if i not in CLAUSES_BY_ID]
    if unknown:
        raise UnknownClause(f"an RFC check cites {unknown[0]!r}, which is not in pwh's clause table (pwh rules)")
    return ids


def cite(rfc: str | tuple[str, ...]) -> str:
    """The citation as a report shows it: each clause's id, its words and their gloss, so a failure
    quotes what it rests on and a reader needs nothing else to weigh it."""
    return "; ".join(f"{c.id} 「{c.quote}」 ({c.gloss})" for c in (CLAUSES_BY_ID[i] for i in citation_ids(rfc)))
