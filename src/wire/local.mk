# src/wire: JSON codecs of model types (jansson), zstd framing, HTTP client (libcurl).
noinst_LIBRARIES += libjpwire.a
libjpwire_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(ZSTD_CFLAGS) $(CURL_CFLAGS)
libjpwire_a_SOURCES = \
	src/wire/zstd_frame.c src/wire/zstd_frame.h
