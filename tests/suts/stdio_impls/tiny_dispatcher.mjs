// A small post-writeback dispatcher in JavaScript, judged by pwh through the stdio seam protocol
// (docs/seam-protocol.md): written from the RFC and the protocol page alone, to show that an
// implementation needs no Python. Each instance's journal is one JSON file in the workdir its open
// names (else memory); it places no crash point and produces no injected fault but an unwritable
// journal.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

const PROTOCOL = "pwh-seam-stdio/2";
const EVENT_KINDS = new Set(["todo_completed", "replan_recorded"]);
const FINAL = new Set(["proposed", "not_applicable"]);
const IDENTITY = ["goal_id", "agent_id", "todo_id", "turn_instance_id", "effect_id"];
const FLAGS = [
  "raw_task_text_recorded", "raw_logs_recorded", "raw_trajectory_recorded",
  "raw_session_transcript_recorded", "credential_values_recorded", "absolute_paths_recorded",
];
const CEILINGS = { max_invocations_per_dispatch: 8, max_intents_per_dispatch: 16, max_result_bytes: 65536, timeout_ms: 30000 };

// One process serves many instances (the protocol's open): each its own state, nothing shared.
function newInstance(workdir) {
  const journalFile = workdir ? join(workdir, "journal.json") : null;
  return {
    journalFile,
    journal: journalFile && existsSync(journalFile) ? JSON.parse(readFileSync(journalFile, "utf8")) : [],
    unwritable: false,
    hooks: [],
    kinds: new Set(),
    profile: { phase_enabled: false, allowlist: null, budget_ceilings: { ...CEILINGS } },
  };
}
const instances = new Map();
let opened = 0;

// Canonical JSON (sorted keys, no spaces) and the digests the RFC asks to be stable.
function canonical(value) {
  if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
  if (value && typeof value === "object") {
    return "{" + Object.keys(value).sort().map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
  }
  return JSON.stringify(value);
}
const sha256 = (text) => createHash("sha256").update(text, "utf8").digest("hex");
const dispatchId = (receipt, hook, version, kind) =>
  "pwh_" + sha256(canonical({ receipt_id: receipt, hook_id: hook, registration_schema_version: version, event_kind: kind }));

// The protocol: requests in order, provider calls answered by reply.
let nextCall = 0;
const waiting = new Map();
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
function call(token, input, timeoutMs) {
  const number = ++nextCall;
  send({ call: number, hook: token, input });
  return new Promise((resolve) => {
    const timer = setTimeout(() => { waiting.delete(number); resolve({ timedOut: true }); }, timeoutMs);
    waiting.set(number, (reply) => { clearTimeout(timer); resolve(reply); });
  });
}

function registrationProblems(inst, reg) {
  const allowed = ["schema_version", "hook_id", "capability_id", "phase", "event_kinds", "intent_kinds", "requested_read_scope", "budget", "failure_policy"];
  if (!reg || typeof reg !== "object" || Array.isArray(reg)) return [["$", "not an object"]];
  for (const key of Object.keys(reg)) if (!allowed.includes(key)) return [[`$.${key}`, "field is not allowed here"]];
  if (typeof reg.hook_id !== "string" || !/^[a-z0-9_]+\.[a-z0-9_.]+$/.test(reg.hook_id)) return [["$.hook_id", "not a hook id"]];
  if (inst.hooks.some((h) => h.reg.hook_id === reg.hook_id)) return [["$.hook_id", "duplicate hook_id"]];
  if (reg.phase !== "post_writeback") return [["$.phase", "not post_writeback"]];
  if (reg.failure_policy !== "isolate") return [["$.failure_policy", "not isolate"]];
  if (!Array.isArray(reg.event_kinds) || !reg.event_kinds.length || reg.event_kinds.some((k) => !EVENT_KINDS.has(k))) return [["$.event_kinds", "unknown or missing"]];
  if (new Set(reg.event_kinds).size !== reg.event_kinds.length) return [["$.event_kinds", "duplicates"]];
  if (!Array.isArray(reg.intent_kinds) || reg.intent_kinds.some((k) => !inst.kinds.has(k))) return [["$.intent_kinds", "unknown intent kind"]];
  for (const key of ["command", "import_string", "callback", "write_scope"]) if (key in reg) return [[`$.${key}`, "forbidden"]];
  return overCeilings(reg, CEILINGS);
}
function overCeilings(reg, ceilings) {
  const budget = reg.budget || {};
  for (const [field, most] of Object.entries(ceilings)) {
    const value = budget[field];
    if (!Number.isInteger(value) || value < 1 || value > most) return [[`$.budget.${field}`, "over its ceiling"]];
  }
  for (const key of Object.keys(budget)) if (!(key in CEILINGS)) return [[`$.budget.${key}`, "field is not allowed here"]];
  return [];
}
const rejections = (found) => found.map(([path, reason]) => ({ code: "registration_rejected", path, reason }));

function admissible(source) {
  if (!source || typeof source !== "object") return "source_rejected";
  if (!EVENT_KINDS.has(source.event_kind)) return "source_rejected";
  if (source.step_status !== "committed" || source.step_kind !== "durable_writeback") return "source_not_committed";
  if (source.durable_checkpoint !== true) return "source_not_durable";
  if (IDENTITY.some((k) => typeof source[k] !== "string" || !source[k])) return "source_rejected";
  if (source.plan_effect_id !== source.effect_id) return "source_rejected";
  if (typeof source.receipt_id !== "string" || !source.receipt_id) return "source_rejected";
  return null;
}

function hookInput(source, reg, did) {
  const input = {
    schema_version: "loopx_post_writeback_hook_input_v0", dispatch_id: did, hook_id: reg.hook_id, capability_id: reg.capability_id,
    source: {
      receipt_id: source.receipt_id, effect_id: source.effect_id, step_kind: "durable_writeback", goal_id: source.goal_id,
      agent_id: source.agent_id, todo_id: source.todo_id, turn_instance_id: source.turn_instance_id,
      event_kind: source.event_kind, state_revision: source.state_revision, committed_at: source.committed_at,
    },
    boundary: Object.fromEntries(FLAGS.map((f) => [f, false])),
  };
  if ((reg.requested_read_scope || []).includes("bounded_event_projection") && source.event) {
    const e = source.event;
    input.projection = { schema_version: "loopx_post_writeback_event_projection_v0", transition: e.transition, segment_ref: e.segment_ref, fact_refs: e.fact_refs };
  }
  return input;
}

function resultProblem(value, reg, did) {
  if (!value || typeof value !== "object" || Array.isArray(value) || !FINAL.has(value.status)) return "status";
  const intents = value.intents || [];
  if (!Array.isArray(intents) || intents.length > reg.budget.max_intents_per_dispatch) return "intents";
  if (value.status === "not_applicable" && intents.length) return "intents";
  for (const i of intents) {
    if (!i || i.source_dispatch_id !== did || i.hook_id !== reg.hook_id || !reg.intent_kinds.includes(i.intent_kind)) return "intent";
    if (i.external_write_performed !== false || i.grants_new_action_authority !== false) return "intent";
  }
  if (Buffer.byteLength(canonical(value), "utf8") > reg.budget.max_result_bytes) return "budget";
  return null;
}

function save(inst) {
  if (inst.unwritable) throw new Error("journal_write_failed");
  if (inst.journalFile) writeFileSync(inst.journalFile, JSON.stringify(inst.journal));
}

async function dispatch(inst, source, consultJournal) {
  const profile = inst.profile;
  const code = admissible(source);
  if (code) return { receipt_id: source?.receipt_id ?? null, event_kind: source?.event_kind ?? null, admitted: false, code, hooks: [] };
  if (!profile.phase_enabled) return { receipt_id: source.receipt_id, event_kind: source.event_kind, admitted: false, code: "phase_disabled", hooks: [] };
  const admitted = inst.hooks
    .filter((h) => h.reg.event_kinds.includes(source.event_kind))
    .filter((h) => profile.allowlist === null || profile.allowlist.includes(h.reg.hook_id))
    .sort((a, b) => (a.reg.hook_id < b.reg.hook_id ? -1 : 1));
  const outcomes = [];
  const writes = [];
  for (const hook of admitted) {
    const did = dispatchId(source.receipt_id, hook.reg.hook_id, hook.reg.schema_version, source.event_kind);
    const prior = inst.journal.find((r) => r.dispatch_id === did);
    if (consultJournal && prior && FINAL.has(prior.status)) {
      outcomes.push({ ...outcomeOf(prior), replayed: true, recorded: true });
      continue;
    }
    let status = "failed", failure = null, intents = [], digest = null;
    if (overCeilings(hook.reg, profile.budget_ceilings).length) failure = "registration_rejected";
    else {
      const reply = await call(hook.token, hookInput(source, hook.reg, did), hook.reg.budget.timeout_ms);
      if (reply.timedOut) failure = "producer_timed_out";
      else if ("raised" in reply) failure = "producer_failed";
      else if (resultProblem(reply.value, hook.reg, did)) failure = "result_contract_rejected";
      else {
        status = reply.value.status;
        intents = reply.value.intents || [];
        digest = sha256(canonical(reply.value));
      }
    }
    const record = {
      dispatch_id: did, hook_id: hook.reg.hook_id, capability_id: hook.reg.capability_id, source_receipt_id: source.receipt_id,
      event_kind: source.event_kind, status, failure_code: failure, intents, result_digest: digest, attempts: (prior?.attempts ?? 0) + 1,
    };
    if (prior && FINAL.has(prior.status)) {  // a second dispatcher's answer meets the stored one
      const same = prior.result_digest === digest;
      outcomes.push(same ? { ...outcomeOf(prior), replayed: true, recorded: true }
        : { ...outcomeOf(prior), status: "failed", failure_code: "intent_conflict", replayed: false, recorded: true });
      continue;
    }
    writes.push([prior, record]);
    outcomes.push({ ...outcomeOf(record), recorded: false });
  }
  if (writes.length) {
    const before = inst.journal.slice();
    for (const [prior, record] of writes) inst.journal = inst.journal.filter((r) => r !== prior).concat([record]);
    try { save(inst); } catch { inst.journal = before; return { receipt_id: source.receipt_id, event_kind: source.event_kind, admitted: true, hooks: outcomes, journal_error: "journal_write_failed" }; }
    for (const o of outcomes) o.recorded = true;
  }
  return { receipt_id: source.receipt_id, event_kind: source.event_kind, admitted: true, code: null, hooks: outcomes, journal_error: null };
}
const outcomeOf = (r) => ({ hook_id: r.hook_id, dispatch_id: r.dispatch_id, status: r.status, failure_code: r.failure_code, intents: r.intents, attempts: r.attempts, replayed: false, recorded: true, rejection: null });

async function serve(request) {
  if (request.op === "start") {
    return { protocol: PROTOCOL, name: "tiny-dispatcher-js", version: "0.1", language: "javascript",
      operations: ["register_intent_kind", "install", "set_profile", "dispatch", "redeliver", "restart", "journal_records", "inject_fault", "close"],
      crash_points: [], faults: ["journal_unwritable"] };
  }
  if (request.op === "open") {
    instances.set(++opened, newInstance(request.workdir));
    return { instance: opened };
  }
  const inst = instances.get(request.instance);
  if (!inst) throw new Error(`no open instance ${request.instance}`);
  switch (request.op) {
    case "register_intent_kind": inst.kinds.add(request.kind); return [];
    case "install": {
      const found = request.provider === null ? [["$", "the provider is not callable"]] : registrationProblems(inst, request.registration);
      if (!found.length) inst.hooks.push({ reg: request.registration, token: request.provider });
      return rejections(found);
    }
    case "set_profile": {
      const p = request.profile;
      inst.profile = { phase_enabled: p.phase_enabled === true, allowlist: p.allowlist && p.allowlist.$set ? p.allowlist.$set : p.allowlist ?? null, budget_ceilings: { ...CEILINGS, ...(p.budget_ceilings || {}) } };
      return null;
    }
    case "dispatch": return dispatch(inst, request.source, true);
    case "redeliver": return dispatch(inst, request.source, false);
    case "restart":
      if (inst.journalFile && existsSync(inst.journalFile)) inst.journal = JSON.parse(readFileSync(inst.journalFile, "utf8"));
      return null;
    case "journal_records": return inst.journal.map((r) => ({ ...r }));
    case "inject_fault":
      if (request.fault !== "journal_unwritable") throw { unsupported: `this journal cannot be made to show ${request.fault}` };
      inst.unwritable = true;
      return null;
    case "close": instances.delete(request.instance); return null;
    default: throw { unsupported: `no operation ${request.op}` };
  }
}

const queue = [];
let busy = false;
async function drain() {
  if (busy) return;
  busy = true;
  while (queue.length) {
    const request = queue.shift();
    try {
      send({ id: request.id, ok: await serve(request) });
    } catch (problem) {
      if (problem && problem.unsupported) send({ id: request.id, unsupported: problem.unsupported });
      else send({ id: request.id, error: { type: "Error", message: String(problem).slice(0, 200) } });
    }
  }
  busy = false;
}

createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if ("reply" in message) {
    const resolve = waiting.get(message.reply);
    waiting.delete(message.reply);
    if (resolve) resolve(message);
    return;
  }
  queue.push(message);
  drain();
}).on("close", () => process.exit(0));
