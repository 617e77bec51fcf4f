"""The API server's rules for DRA objects: field errors per kind, the create/update
strategy (defaults, dropping fields of disabled gates) and the admission decision.

Where things live:

- the decision: :mod:`.admission` (``review``), over one module per kind (:mod:`.resourceslice`,
  :mod:`.deviceclass`, :mod:`.resourceclaim` and :mod:`.resourceclaimstatus`,
  :mod:`.resourceclaimtemplate`, :mod:`.podgroup`, :mod:`.pod`), each with its strategy
  (``prepare_*``) and its rules (``validate_*``);
- the parts of a slice's devices: :mod:`.deviceattributes`, :mod:`.devicecapacity`,
  :mod:`.devicecounters`; driver-written statuses: :mod:`.devicestatus`;
- rules several kinds share: :mod:`.objectmeta`, :mod:`.names` (over the text formats of
  :mod:`.formats`), :mod:`.nodeselector`, :mod:`.taints`, :mod:`.binding`, :mod:`.selectors`
  (CEL), :mod:`.config` (opaque parameters);
- the building blocks: :mod:`.field` (paths and errors), :mod:`.schema` (JSON type errors),
  :mod:`.lists` (list and map shapes), :mod:`.values` (decoded JSON as Go sees it),
  :mod:`.gating` (feature gates).
"""
