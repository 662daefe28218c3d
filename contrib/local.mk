# contrib: the container image (contrib/images) and the Kubernetes
# manifests (contrib/k8s, a kustomization); scripts/build-images builds one
# from the other's point of view: the image the manifests name.
EXTRA_DIST += contrib/images/Containerfile \
	contrib/k8s/README.md contrib/k8s/kustomization.yaml \
	contrib/k8s/base/kustomization.yaml contrib/k8s/base/namespace.yaml \
	contrib/k8s/base/agent.yaml contrib/k8s/base/server.yaml \
	contrib/k8s/base/networkpolicy.yaml \
	contrib/k8s/overlays/embedded/kustomization.yaml contrib/k8s/overlays/embedded/pvc.yaml \
	contrib/k8s/overlays/embedded/server-embedded.yaml \
	contrib/k8s/overlays/clickhouse/kustomization.yaml \
	contrib/k8s/overlays/clickhouse/clickhouse.yaml \
	contrib/k8s/overlays/clickhouse/server-clickhouse.yaml \
	contrib/k8s/overlays/clickhouse-cluster/kustomization.yaml \
	contrib/k8s/overlays/clickhouse-cluster/server-clickhouse-cluster.yaml

# make images: the image from this tree's release files (make distdir: the
# same files a tarball has, and its .tarball-version), written as an OCI
# archive to images/ in the build directory. IMAGE_BUILDER=docker|podman|buildah
# picks the builder (default: the first that works).
IMAGES_DISTDIR = images-src/$(PACKAGE)-$(VERSION)
images:
	rm -rf images-src && $(MKDIR_P) images-src
	$(MAKE) $(AM_MAKEFLAGS) distdir distdir=$(IMAGES_DISTDIR)
	$(top_srcdir)/scripts/build-images $(IMAGE_BUILDER:%=--builder %) --out images $(IMAGES_DISTDIR); \
	rc=$$?; rm -rf images-src; exit $$rc
.PHONY: images
clean-local: clean-local-images
clean-local-images:
	rm -rf images-src
.PHONY: clean-local-images
