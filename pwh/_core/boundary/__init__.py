"""Public-boundary scanner: finds private data before it crosses into a public packet (SPEC §2 INP, JNL-6, M13).

Hook inputs, journal records, reports and published packets must carry only opaque ids, bounded
typed fields and compact codes. This module finds what must not cross that boundary (URLs, e-mail
addresses, local paths, credentials, IP addresses, host names, declared private names, chat
transcripts, raw logs, environment values) in any JSON-like value or in a text file's content.

A finding names *where* (a JSON path, or ``line N``) and *what category*, never the offending value,
so a report about a leak can itself be published.

The scanner runs on every hook input in the dispatcher's hot path, so each rule is gated by a cheap
substring test and short lowercase ids skip almost all of them. It never raises: values are
inspected by exact type only, unknown objects are skipped without calling any of their methods,
and deep or cyclic structures end in one ``unscannable`` finding instead of a ``RecursionError``.

Every string is first normalised (:mod:`pwh._core.boundary.text`: NFKC, invisible characters removed,
the confusable skeleton), so look-alike spellings meet the same rules, and a string found clean is
read again as what it decodes to (:mod:`.decoding`: percent-encoding, escapes, base64, hex).
Credentials come from detect-secrets' plugins and pwh's own shapes, and from keys that name a
secret in any case style (:mod:`.secrets`; a bare ``token`` key by its value's shape, :mod:`.values`),
from an auth scheme without its header (:mod:`.schemes`) and from a token cut across list items or
a key and its value (:mod:`.fragments`); host names from the Public Suffix List read by the name's
shape (:mod:`.hosts`); addresses told from versions and ids (:mod:`.addresses`); transcripts
(:mod:`.transcripts`) and raw logs (:mod:`.logs`) by their turns and their loggers' formats; paths,
e-mail and environment values from :mod:`.detectors`. A string in a field the contracts type as an
opaque id (:data:`OPAQUE_FIELDS`), or under a key naming an id or a reference (``ref``,
``parent_id``), that matches the field's grammar is judged as an id (``billing.report`` is not a
host there).
The rates on a labelled corpus are in :mod:`pwh._harness.boundary_corpus`; zero false positives on the
project's own public material (prose, Gherkin, JSON Schema, ids, digests, timestamps, versions,
JSON paths) is held by the reliability campaign. This module reads no environment variable: the
deny-list of private names is passed in by the caller (the CLI reads ``PWH_PRIVATE_NAMES``).

Of all it finds, one part needs no reading: :func:`credential_values` finds the credentials of a
certain format (a documented token prefix or structure, a private key with its key material, a
connection string or URL holding a key or password, an HTTP credential after its scheme). The RFC
excludes credentials from hook inputs (§7) and the journal (§9): conformance checks judge that part
as RFC and the rest of the scan as pwh's reading (profile).
"""

from pwh._core.boundary.detectors import CATEGORIES
from pwh._core.boundary.fields import OPAQUE_FIELDS
from pwh._core.boundary.scanner import (
    MAX_DEPTH,
    BoundaryScanner,
    CredentialValue,
    Finding,
    credential_values,
    is_clean,
    scan_value,
)

__all__ = [
    "CATEGORIES",
    "MAX_DEPTH",
    "OPAQUE_FIELDS",
    "BoundaryScanner",
    "CredentialValue",
    "Finding",
    "credential_values",
    "is_clean",
    "scan_value",
]
