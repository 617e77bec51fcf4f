"""Hypothesis fuzzing of the webhook (in-process Flask test client): thousands of generated and
mutated AdmissionReviews and raw bodies. Nothing may answer 5xx; every 200 is a well-formed
AdmissionReview answering the request's uid; /mutate never denies and its JSONPatch applies
to the submitted object; a malformed body is a 400 with a message."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_dra.gates import FeatureGates
from tests.admission_scenarios import load_admission_scenarios
from tests.conftest import corpus
from tests.webhook_support import admission_review, apply_response_patch, check_response_shape
from webhook.app import Settings, create_app
from webhook.metrics import Metrics
from webhook.namespaces import NamespaceLookupError

#: Examples per property (2,000 in all, each posted to /validate and /mutate).
EXAMPLES_MUTATED, EXAMPLES_GENERATED, EXAMPLES_RAW = 1000, 600, 400

FUZZ = settings(deadline=None, derandomize=True, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

#: Scenario objects to edit; the few huge ones (hundreds of devices) only slow generation down.
SCENARIOS = [s for s in load_admission_scenarios() if len(json.dumps(s["object"])) < 8_000]
SCENARIO_OBJECTS = [s["object"] for s in SCENARIOS]
SCENARIO_UPDATES = [(s["object"], s["oldObject"]) for s in SCENARIOS if s.get("oldObject")]

KINDS = [
    {"group": "resource.k8s.io", "version": "v1", "kind": k}
    for k in ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate")
] + [
    {"group": "scheduling.k8s.io", "version": "v1beta1", "kind": "PodGroup"},
    {"group": "", "version": "v1", "kind": "Pod"},
    {"group": "", "version": "v1", "kind": "ConfigMap"},
    {"group": "resource.k8s.io", "version": "v1beta2", "kind": "ResourceClaim"},
]


def _labels(namespace: str) -> dict[str, str]:
    """Namespace lookups that sometimes grant admin access and sometimes fail."""
    if namespace.startswith("fail"):
        raise NamespaceLookupError(f"reading namespace {namespace!r} failed: timeout")
    return {"resource.kubernetes.io/admin-access": "true"} if len(namespace) % 2 else {}


METRICS = Metrics()
CLIENTS = {
    mode: create_app(Settings(gates=FeatureGates.default().with_overrides("AllAlpha=true,AllBeta=true"),
                              mode=mode, namespace_labels=_labels), METRICS).test_client()
    for mode in ("enforce", "warn")
}
CLIENTS["ga"] = create_app(Settings(gates=FeatureGates.only([]), namespace_labels=_labels), METRICS).test_client()

# --- strategies ------------------------------------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.sampled_from(["", "0", "-1", "1Gi", "1e3", "500m", "ExactCount", "All", "true", "a/b", "a" * 300,
                     "device.driver == 'x'", "gpu.example.com", "NoSchedule", "Exists", "💥", "\x00"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=5),
                               st.dictionaries(st.text(max_size=12), children, max_size=5)),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every container path inside a JSON value (for picking a mutation site)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found.extend(_paths(child, prefix + (key,)))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found.extend(_paths(child, prefix + (i,)))
    return found


def _get(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


@st.composite
def mutated(draw: st.DrawFn, obj: dict[str, Any], max_mutations: int = 4) -> dict[str, Any]:
    """``obj`` with a few random edits: replace, delete, insert, duplicate list items, change type."""
    obj = copy.deepcopy(obj)
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = _paths(obj)
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent = _get(obj, path[:-1])
        key = path[-1]
        action = draw(st.sampled_from(["replace", "delete", "insert", "duplicate", "wrap", "empty"]))
        if action == "replace":
            parent[key] = draw(json_values)
        elif action == "delete":
            del parent[key]
        elif action == "insert" and isinstance(parent, dict):
            parent[draw(st.text(max_size=12))] = draw(json_values)
        elif action == "duplicate" and isinstance(parent, list):
            parent.extend(copy.deepcopy(parent[key]) for _ in range(draw(st.integers(1, 40))))
        elif action == "wrap":
            parent[key] = [parent[key]]
        elif action == "empty":
            parent[key] = type(parent[key])() if isinstance(parent[key], (dict, list, str)) else None
    return obj


@st.composite
def mutated_scenario_review(draw: st.DrawFn) -> dict[str, Any]:
    """A real scenario object, edited, as a CREATE or UPDATE AdmissionReview."""
    if draw(st.booleans()) and SCENARIO_UPDATES:
        new, old = draw(st.sampled_from(SCENARIO_UPDATES))
        return admission_review(draw(mutated(new)), operation="UPDATE", old=draw(mutated(old, 2)))
    obj = draw(mutated(draw(st.sampled_from(SCENARIO_OBJECTS))))
    namespace = draw(st.sampled_from(["team-a", "admins", "fail-ns", ""]))
    review = admission_review(obj, namespace=namespace or None)
    if isinstance(obj, dict) and isinstance(obj.get("kind"), str):
        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        review["request"]["kind"] = {"group": group, "version": version, "kind": obj["kind"]}
    return review


def _mostly(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually a sensible value, sometimes a random scalar of any type."""
    return st.one_of(good, good, good, scalars)


@st.composite
def generated_review(draw: st.DrawFn) -> Any:
    """An AdmissionReview envelope whose every part may be missing, mistyped or random."""
    kind = draw(_mostly(st.sampled_from(KINDS)))
    obj = draw(st.one_of(json_values, st.fixed_dictionaries({
        "apiVersion": _mostly(st.sampled_from(["resource.k8s.io/v1", "v1", "scheduling.k8s.io/v1beta1"])),
        "kind": _mostly(st.sampled_from([k["kind"] for k in KINDS])),
        "metadata": _mostly(st.fixed_dictionaries({"name": st.text(max_size=20), "namespace": st.text(max_size=10)})),
        "spec": json_values,
    })))
    request = {
        "uid": draw(_mostly(st.uuids().map(str))),
        "kind": kind,
        "operation": draw(_mostly(st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT", "create"]))),
        "namespace": draw(_mostly(st.sampled_from(["team-a", "admins", "fail-ns", ""]))),
        "object": obj,
        "oldObject": draw(st.one_of(st.none(), st.just(obj), scalars)),
        "subResource": draw(st.sampled_from([None, "", "status"])),
    }
    for key in draw(st.sets(st.sampled_from(sorted(request)), max_size=2)):
        del request[key]
    envelope = {"apiVersion": draw(st.sampled_from(["admission.k8s.io/v1", "admission.k8s.io/v1", "admission.k8s.io/v1beta1", None])),
                "kind": draw(st.sampled_from(["AdmissionReview", "AdmissionReview", "Status"])),
                "request": draw(_mostly(st.just(request)))}
    return draw(_mostly(st.just(envelope)))


# --- properties --------------------------------------------------------------------------------


MODES = st.sampled_from(sorted(CLIENTS))


def _assert_sound(body: bytes, payload: Any | None, mode: str) -> None:
    """Post the body to both endpoints of one configuration; check the invariants of each answer."""
    client = CLIENTS[mode]
    for path in ("/validate", "/mutate"):
        reply = client.post(path, data=body, content_type="application/json")
        assert reply.status_code in (200, 400, 413), (mode, path, reply.status_code, reply.get_data(as_text=True))
        answer = reply.get_json()
        if reply.status_code != 200:
            assert answer["kind"] == "Status" and answer["message"], answer
            continue
        assert isinstance(payload, dict), "only an AdmissionReview may be answered with 200"
        response = check_response_shape(payload, answer)
        if path == "/mutate":
            assert response["allowed"] is True
            obj = payload["request"].get("object")
            if "patch" in response:
                apply_response_patch(obj, response)
        elif mode == "warn":
            assert response["allowed"] is True


def _decisions(*labels: str) -> float:
    """How many requests ended in one of these decisions (all endpoints and modes)."""
    body, _ = METRICS.exposition()
    total = 0.0
    for line in body.decode().splitlines():
        if line.startswith("dra_webhook_admission_requests_total{") and any(f'decision="{d}"' in line for d in labels):
            total += float(line.rsplit(" ", 1)[1])
    return total


DECIDED = ("allowed", "denied", "warned", "patched")


@settings(FUZZ, max_examples=EXAMPLES_MUTATED)
@given(mutated_scenario_review(), MODES)
def _fuzz_mutated_scenario_reviews(review: dict[str, Any], mode: str) -> None:
    _assert_sound(json.dumps(review).encode(), review, mode)


@corpus
def test_mutated_scenario_reviews() -> None:
    """Edited scenario objects: all answered soundly, and most reach the core's decision."""
    before = _decisions(*DECIDED)
    _fuzz_mutated_scenario_reviews()
    assert _decisions(*DECIDED) - before >= EXAMPLES_MUTATED * 2 * 0.5


@settings(FUZZ, max_examples=EXAMPLES_GENERATED)
@given(generated_review(), MODES)
def test_generated_reviews(review: Any, mode: str) -> None:
    _assert_sound(json.dumps(review).encode(), review, mode)


@settings(FUZZ, max_examples=EXAMPLES_RAW)
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode),
                 json_values.map(lambda v: json.dumps(v).encode())), MODES)
def test_raw_bodies(body: bytes, mode: str) -> None:
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        payload = None
    _assert_sound(body, payload, mode)
