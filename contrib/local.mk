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
# picks the builder (default: the first that works). With a cross build here
# (configure --with-cross-probe, docs/ARM64.md) the other architecture's
# image takes its programs from it (images-other: that tree installed with
# the image's directories), so the image's build compiles this machine's
# programs only; without one, the image's build stage cross-compiles them.
IMAGES_DISTDIR = images-src/$(PACKAGE)-$(VERSION)
images: images-other
	rm -rf images-src && $(MKDIR_P) images-src
	$(MAKE) $(AM_MAKEFLAGS) distdir distdir=$(IMAGES_DISTDIR)
	other=; test ! -d images-other || other="--other-tree images-other"; \
	$(top_srcdir)/scripts/build-images $(IMAGE_BUILDER:%=--builder %) $$other --out images $(IMAGES_DISTDIR); \
	rc=$$?; rm -rf images-src; exit $$rc
# images-other: the cross build's programs installed under images-other/usr
images-other:
	rm -rf images-other
if CROSS_PROBE
	$(MAKE) $(AM_MAKEFLAGS) $(XPROBE)
	$(MAKE) -C $(XPROBE_DIR) install-strip DESTDIR=$(abs_builddir)/images-other \
	  prefix=/usr exec_prefix=/usr sysconfdir=/etc localstatedir=/var >/dev/null
endif
.PHONY: images images-other
clean-local: clean-local-images
clean-local-images:
	rm -rf images-src images-other
.PHONY: clean-local-images
