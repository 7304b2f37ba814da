"""Manifests several test modules check: a Deployment without a CPU request (PF101, an error), a
well-sized one (no findings), and one with a memory limit alone (its requests taken from it)."""

NO_REQUESTS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: app
          image: registry.example.com/web:1.0
          resources:
            limits: {memory: 512Mi}
            requests: {memory: 512Mi}
"""

WELL_SIZED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: app
          image: registry.example.com/api:1.0
          resources:
            requests: {cpu: 500m, memory: 512Mi}
            limits: {memory: 512Mi}
"""

LIMITS_ONLY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: good, namespace: ns}
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: app
          image: app:1
          resources: {limits: {memory: 1Gi}}
"""

# On a cluster whose pools lie in three zones: six pods pinned to eu-west-1a, ten spread over the
# zones with maxSkew 1 and DoNotSchedule (tests of platform import and of zone spread).
ZONE_SPREAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: filler, namespace: shop}
spec:
  replicas: 6
  selector: {matchLabels: {app: filler}}
  template:
    metadata: {labels: {app: filler}}
    spec:
      nodeSelector: {topology.kubernetes.io/zone: eu-west-1a}
      containers:
        - {name: app, image: registry.example.com/filler:1, resources: {requests: {cpu: 10m, memory: 16Mi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: spread, namespace: shop}
spec:
  replicas: 10
  selector: {matchLabels: {app: spread}}
  template:
    metadata: {labels: {app: spread}}
    spec:
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: spread}}}
      containers:
        - {name: app, image: registry.example.com/spread:1, resources: {requests: {cpu: 10m, memory: 16Mi}}}
"""
