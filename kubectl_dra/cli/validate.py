"""``kubectl dra validate``: the webhook's admission decision, offline, for files of DRA objects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import click

from ..errors import InputError, UsageError
from ..state import load_documents
from .common import dump, gate_options, resolve_gates, stderr_is_terminal, warn

if TYPE_CHECKING:
    from ..advice import Inventory
    from ..validation.admission import Decision

_HELP = """Apply the API server's DRA admission rules to objects in files, offline.

\b
Kinds: ResourceSlice, DeviceClass, ResourceClaim, ResourceClaimTemplate,
PodGroup and Pod (DRA fields); other kinds are reported as not checked.
Each object gets the decision the webhook makes, from the same code:
defaults applied, fields of disabled feature gates dropped, every field
error listed.

\b
Output (default): one line per error, `Kind/name: field.path: message`,
and `Kind/name: ok` for each valid object.
-o json / -o yaml: for one object, its decision
  {"kind", "name", "namespace", "operation", "allowed",
   "errors": [{"type", "field", "value", "message"}], "warnings",
   "patch": [RFC 6902 JSONPatch ops], "object": <object after mutation>};
for several objects, a list of such decisions in input order.

\b
Updates: --old FILE holds the stored object(s); each object is paired with
the stored object of the same kind, namespace and name (or, with one object
on each side, with that one). --operation defaults to UPDATE then.
--subresource status checks a status update (allocation, reservedFor,
device statuses of a ResourceClaim; claim statuses of a PodGroup).

\b
Examples:
  kubectl dra validate -f claim.yaml
  kubectl dra validate -f slices/ --feature-gates DRAPartitionableDevices=true
  kubectl dra validate -f claim.yaml --namespace-labels resource.kubernetes.io/admin-access=true
  kubectl dra validate -f new.yaml --old stored.yaml -o json
  kubectl get resourceslices -o yaml | kubectl dra validate -f -
  kubectl dra validate -f claims/ --unknown-fields error   # typos fail, as kubectl apply's
  kubectl get resourceclaim my-claim -o yaml > old.yaml && \\
    kubectl dra validate -f claim-with-status.yaml --old old.yaml --subresource status


With a cluster (--state FILES, or --live for the kubeconfig's cluster), valid
objects also get the webhook's apply-time warnings: a DeviceClass that does not
exist, a request no device matches ("pods using this claim will stay Pending"),
a count no single node can reach, a DeviceClass that matches no device, a slice
attribute whose type differs from the driver's other slices. Warnings never
change the exit status.
  kubectl dra validate -f claim.yaml --state cluster-dump.yaml
  kubectl dra validate -f claim.yaml --live

Exit status: 0 all valid, 1 some object is invalid, 2 usage or input error.
"""


@click.command("validate", help=_HELP, short_help="Apply the API server's DRA rules to files offline.")
@click.option("-f", "--filename", "filenames", multiple=True, required=True, metavar="FILE",
              type=click.Path(allow_dash=True),
              help="Objects to check: YAML/JSON files, multi-document, `kind: List`, directories, - for stdin. "
              "Repeatable.")
@click.option("--old", "old_paths", multiple=True, metavar="FILE", type=click.Path(allow_dash=True),
              help="The stored object(s) for an UPDATE. Repeatable.")
@click.option("--operation", type=click.Choice(["CREATE", "UPDATE"], case_sensitive=False), default=None,
              help="Admission operation (default: CREATE, or UPDATE when --old is given).")
@click.option("--subresource", type=click.Choice(["status"]), default=None,
              help="Check an update of the status subresource (ResourceClaim, PodGroup); needs --old.")
@click.option("--namespace-labels", metavar="K=V,…", default=None,
              help="Labels of the objects' namespace (stands in for the namespace lookup that "
              "admin access needs).")
@click.option("-n", "--namespace", metavar="NS", default=None,
              help="Namespace for namespaced objects that do not name one (default: default).")
@click.option("--unknown-fields", type=click.Choice(["warn", "error", "ignore"]), default="warn", show_default=True,
              help="Fields the API does not define (a typo such as `conut:` is otherwise dropped silently): "
              "warn as the API server does, fail like kubectl's strict field validation, or ignore. Uses the "
              "schemas of the kubernetes-validate package; without it, warn says so once and error is a usage error.")
@click.option("--state", "state_paths", multiple=True, metavar="PATH", type=click.Path(allow_dash=True),
              help="Cluster state (DeviceClasses, ResourceSlices) to warn against, from files: YAML/JSON, "
              "directories, - for stdin. Repeatable.")
@click.option("--live", is_flag=True, help="Warn against the live cluster's DeviceClasses and ResourceSlices.")
@click.option("--kubeconfig", metavar="FILE", type=click.Path(dir_okay=False), help="Kubeconfig for --live.")
@click.option("--context", "kube_context", metavar="NAME", help="Kubeconfig context for --live.")
@gate_options
@click.option("-o", "--output", "output", type=click.Choice(["text", "json", "yaml", "name"]), default="text",
              show_default=True, help="Output format (name: KIND.GROUP/NAME of each valid object, as kubectl's "
              "-o name; errors on stderr).")
@click.pass_context
def validate(ctx: click.Context, filenames: Sequence[str], old_paths: Sequence[str], operation: str | None,
             subresource: str | None, namespace_labels: str | None, namespace: str | None, unknown_fields: str,
             state_paths: Sequence[str], live: bool, kubeconfig: str | None, kube_context: str | None,
             feature_gates: str | None, kubernetes_version: str | None, output: str) -> None:
    # A DraError becomes one `error:` line and its exit code in the command group (cli/main.py).
    if live and state_paths:
        raise UsageError("--live and --state cannot be used together: one reads the cluster, the other files")
    if (kubeconfig or kube_context) and not live:
        raise UsageError("--kubeconfig and --context only apply with --live")
    cluster = ClusterSource(tuple(state_paths), live, kubeconfig, kube_context)
    code = _run(filenames, old_paths, operation, subresource, namespace_labels, namespace, feature_gates,
                kubernetes_version, output, unknown_fields, cluster)
    ctx.exit(code)


@dataclass(frozen=True)
class ClusterSource:
    """Where apply-time warnings read the cluster from: --state files, --live, or nowhere."""

    state_paths: tuple[str, ...] = ()
    live: bool = False
    kubeconfig: str | None = None
    kube_context: str | None = None

    def inventory(self) -> "Inventory | None":
        """The cluster's DeviceClasses and ResourceSlices, or None without a cluster."""
        if not self.state_paths and not self.live:
            return None
        from ..advice import Inventory
        from .common import load_cluster

        state = load_cluster(self.state_paths, self.kubeconfig, self.kube_context)
        return Inventory.from_objects(state.device_classes, state.resource_slices)


#: show progress on a terminal's stderr from this many objects on
_PROGRESS_MIN = 500


def _run(filenames: Sequence[str], old_paths: Sequence[str], operation: str | None, subresource: str | None,
         namespace_labels: str | None, namespace: str | None, feature_gates: str | None, kubernetes_version: str | None,
         output: str, unknown_fields: str = "ignore", cluster: ClusterSource = ClusterSource()) -> int:
    """Decide on every object; print the decisions; return the exit status."""
    from ..validation.admission import review

    if list(filenames).count("-") + list(old_paths).count("-") > 1:
        raise UsageError("stdin (-) can be read only once: give the other objects as files")
    gates = resolve_gates(feature_gates, kubernetes_version)
    labels = parse_labels(namespace_labels)
    op = (operation or ("UPDATE" if old_paths else "CREATE")).upper()
    if unknown_fields != "ignore":
        from ..validation import unknown_fields as strict

        if not strict.available():
            if unknown_fields == "error":
                raise UsageError(f"--unknown-fields error needs the {strict.PACKAGE} package "
                                 f"(pip install {strict.PACKAGE}), or use --unknown-fields warn|ignore")
            click.echo(f"warning: unknown fields are not checked: the {strict.PACKAGE} package is not installed "
                       f"(pip install {strict.PACKAGE}; --unknown-fields ignore silences this)", err=True)
            unknown_fields = "ignore"
    originals = load_documents(filenames, check_shapes=False)
    objects = [_as_v1(o) for o in originals]
    if not objects:
        shown = ", ".join("<stdin>" if f == "-" else f for f in filenames)
        raise InputError(f"{shown}: no objects found")
    olds = [_as_v1(o, quiet=True) for o in load_documents(old_paths, check_shapes=False)] if old_paths else []
    if op == "UPDATE" and not olds:
        raise UsageError("--operation UPDATE needs the stored object(s) in --old")
    if subresource and op != "UPDATE":
        raise UsageError(f"--subresource {subresource} is only checked for updates: give the stored object in --old")
    default_ns = namespace or "default"
    pairs = _pair(objects, olds, default_ns) if op == "UPDATE" else [(o, None) for o in objects]

    show_progress = len(pairs) >= _PROGRESS_MIN and stderr_is_terminal()
    decisions = []
    for i, (obj, old) in enumerate(pairs, 1):
        decision = review(obj, operation=op, old=old, namespace_labels=labels, gates=gates,
                          namespace=default_ns, subresource=subresource)
        decisions.append(_refuse_unserved(decision, _original_of(obj, originals, objects)))
        if show_progress and (i % 100 == 0 or i == len(pairs)):
            click.echo(f"\rvalidated {i}/{len(pairs)} objects", err=True, nl=i == len(pairs))
    if unknown_fields != "ignore":
        _mark_unknown_fields(decisions, [o for o, _ in zip(originals, pairs)] if op != "UPDATE" else
                             [_original_of(obj, originals, objects) for obj, _ in pairs], gates.version,
                             unknown_fields == "error")
    inventory = cluster.inventory()
    if inventory is not None:
        from ..advice import advise

        for d, (obj, _) in zip(decisions, pairs):
            if d.allowed:
                d.warnings.extend(advise(d.kind, obj, inventory))
    for d in decisions:
        for w in d.warnings:
            warn(f"{d.kind}/{d.name}: {w}")
    if output in ("json", "yaml"):
        docs: Any = [d.to_dict() for d in decisions]
        click.echo(dump(docs[0] if len(docs) == 1 else docs, output))
    elif output == "name":  # as kubectl's -o name: resource.group/name of each object it accepts
        for d in decisions:
            if d.allowed:
                click.echo(resource_name(d.kind, d.name))
            else:
                for line in human_lines(d):
                    click.echo(line, err=True)
    else:
        for d in decisions:
            for line in human_lines(d):
                click.echo(line)
    return 0 if all(d.allowed for d in decisions) else 1


def _refuse_unserved(decision: "Decision", original: dict) -> "Decision":
    """The decision, or a refusal when the API server does not serve the object's apiVersion
    for its kind (it then never reaches validation: no field errors, no patch)."""
    import dataclasses

    from ..validation.versions import api_version_errors

    errors = api_version_errors(original)
    if not errors:
        return decision
    return dataclasses.replace(decision, allowed=False, errors=errors, warnings=[], object=original, submitted=None)


def _original_of(obj: dict, originals: list[dict], objects: list[dict]) -> dict:
    """The object as written in the file (before a v1beta1 → v1 conversion)."""
    for original, converted in zip(originals, objects):
        if converted is obj:
            return original
    return obj


def _mark_unknown_fields(decisions: list["Decision"], originals: list[dict], release: str, fail: bool) -> None:
    """Add ``unknown field "…"`` warnings (or errors) to each decision about a DRA object."""
    from ..validation.admission import SUPPORTED_KINDS
    from ..validation.field import unknown_field
    from ..validation.unknown_fields import unknown_fields

    for decision, original in zip(decisions, originals):
        if decision.kind not in SUPPORTED_KINDS:
            continue
        fields = unknown_fields(original, release) or []
        if fail and fields:
            decision.errors.extend(unknown_field(f) for f in fields)
            decision.allowed = False
        else:
            decision.warnings.extend(f'unknown field "{f}"' for f in fields)


#: kind -> its API group, for ``-o name`` (``resourceclaim.resource.k8s.io/NAME``, as kubectl prints it)
_GROUPS = {"ResourceSlice": "resource.k8s.io", "DeviceClass": "resource.k8s.io", "ResourceClaim": "resource.k8s.io",
           "ResourceClaimTemplate": "resource.k8s.io", "PodGroup": "scheduling.k8s.io", "Pod": ""}


def resource_name(kind: str | None, name: str | None) -> str:
    """``kind.group/name`` in lower case, as ``kubectl … -o name`` prints an object."""
    kind = kind or "unknown"
    group = _GROUPS.get(kind, "")
    return f"{kind.lower()}{'.' + group if group else ''}/{name or '?'}"


def human_lines(decision: "Decision") -> list[str]:
    """``Kind/name: field.path: message`` per error, or one ``ok`` line."""
    from ..validation.admission import SUPPORTED_KINDS

    ref = f"{decision.kind or '?'}/{decision.name or '?'}"
    if decision.errors:
        return [f"{ref}: {_one_line(str(err))}" for err in decision.errors]
    if decision.kind not in SUPPORTED_KINDS:
        return [f"{ref}: ok (not checked: not a DRA kind)"]
    return [f"{ref}: ok"]


def _one_line(text: str) -> str:
    """A message on one line: CEL's source excerpt and caret (`` | …`` lines) are dropped, since the
    ``<input>:line:column`` before them says where; other lines are joined with ``; ``."""
    lines = [line.strip() for line in text.splitlines()]
    return "; ".join(line for line in lines if line and not line.startswith("|"))


def parse_labels(text: str | None) -> dict[str, str]:
    """``k=v,k2=v2`` into a dict; a bare key is rejected (values may be empty: ``k=``)."""
    labels: dict[str, str] = {}
    if not text:
        return labels
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--namespace-labels: {item!r} is not of the form key=value")
        labels[key.strip()] = value.strip()
    return labels


def _as_v1(obj: dict, quiet: bool = False) -> dict:
    """An object of an older resource.k8s.io version in its v1 form, as the API server converts
    it before validating (see kubectl_dra.convert); the decision then names v1 paths, as
    upstream's errors do."""
    from ..convert import needs_conversion, to_v1

    if not needs_conversion(obj):
        return obj
    if not quiet:
        name = (obj.get("metadata") or {}).get("name", "?") if isinstance(obj.get("metadata"), dict) else "?"
        warn(f"{obj.get('kind')}/{name}: converted from {obj.get('apiVersion')} to resource.k8s.io/v1 for "
             "validation; the decision names v1 fields")
    return to_v1(obj)


def _identity(obj: dict, default_ns: str) -> tuple[str, str, str]:
    from ..validation.admission import NAMESPACED_KINDS

    meta = given if isinstance(given := obj.get("metadata"), dict) else {}
    kind = str(obj.get("kind") or "")
    ns = str(meta.get("namespace") or default_ns) if kind in NAMESPACED_KINDS else ""
    return kind, ns, str(meta.get("name") or "")


def _pair(objects: list[dict], olds: list[dict], default_ns: str) -> list[tuple[dict, dict]]:
    """Each object with its stored version: the only one, or the one of the same identity."""
    if len(objects) == 1 and len(olds) == 1:
        return [(objects[0], olds[0])]
    stored = {_identity(o, default_ns): o for o in olds}
    pairs = []
    for obj in objects:
        key = _identity(obj, default_ns)
        old = stored.get(key)
        if old is None:
            kind, ns, name = key
            where = f" in namespace {ns}" if ns else ""
            held = ", ".join(f"{k}/{n}" + (f" (namespace {s})" if s else "") for k, s, n in stored) or "nothing"
            raise UsageError(f"{kind}/{name}{where}: no stored object of that kind and name in --old "
                             f"(it holds {held})")
        pairs.append((obj, old))
    return pairs
