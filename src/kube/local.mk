# src/kube: the kubectl client (filled in below)
