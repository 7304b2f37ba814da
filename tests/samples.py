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
