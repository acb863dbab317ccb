// The PNG decoders beside one another (issue 29; make bench GROUPS=cold runs it): for each PNG
// given, libspng's full decode to RGBA8 (what libvips reads PNG with), libpng's, and libdeflate's
// inflate of the image data alone (the first stage of ours). Medians of 7.
#include <spng.h>
#include <png.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }
static unsigned be32(const unsigned char *p) { return (unsigned)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }
#define ROUNDS 7
int main(int argc, char **argv) {
    double totals[3] = {0};
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
        unsigned char *buf = malloc(n); fread(buf, 1, n, f); fclose(f);
        // IDAT stream and IHDR for the inflate-only row.
        unsigned char *z = malloc(n); size_t zn = 0; unsigned w = be32(buf + 16), h = be32(buf + 20);
        int depth = buf[24], ctype = buf[25]; int ch = ctype == 6 ? 4 : ctype == 2 ? 3 : ctype == 4 ? 2 : 1;
        for (long p = 8; p + 8 <= n;) { unsigned len = be32(buf + p); if (!memcmp(buf + p + 4, "IDAT", 4)) { memcpy(z + zn, buf + p + 8, len); zn += len; } p += 12 + len; }
        size_t raw = (size_t)h * (1 + ((size_t)w * ch * depth + 7) / 8);
        unsigned char *out = malloc((size_t)w * h * 4 > raw ? (size_t)w * h * 4 : raw);
        double t[3][ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            double s = now();
            spng_ctx *ctx = spng_ctx_new(0); spng_set_png_buffer(ctx, buf, n);
            spng_set_crc_action(ctx, SPNG_CRC_USE, SPNG_CRC_USE);
            size_t size; spng_decoded_image_size(ctx, SPNG_FMT_RGBA8, &size);
            if (spng_decode_image(ctx, out, size, SPNG_FMT_RGBA8, 0)) { fprintf(stderr, "spng failed %s\n", argv[i]); }
            spng_ctx_free(ctx); t[0][r] = now() - s;
            s = now();
            png_image image; memset(&image, 0, sizeof image); image.version = PNG_IMAGE_VERSION;
            png_image_begin_read_from_memory(&image, buf, n); image.format = PNG_FORMAT_RGBA;
            png_image_finish_read(&image, NULL, out, 0, NULL); t[1][r] = now() - s;
            s = now();
            struct libdeflate_decompressor *d = libdeflate_alloc_decompressor(); size_t got;
            libdeflate_zlib_decompress(d, z, zn, out, raw, &got); libdeflate_free_decompressor(d); t[2][r] = now() - s;
        }
        printf("%-28s %5ux%-5u d%d c%d", strrchr(argv[i], '/') + 1, w, h, depth, ctype);
        for (int k = 0; k < 3; k++) { qsort(t[k], ROUNDS, sizeof(double), cmp); printf(" %8.2f ms", t[k][ROUNDS / 2] * 1000); totals[k] += t[k][ROUNDS / 2]; }
        printf("\n"); free(buf); free(z); free(out);
    }
    printf("%-45s %8.2f ms %8.2f ms %8.2f ms   (libspng full | libpng full | libdeflate inflate only)\n", "total", totals[0] * 1000, totals[1] * 1000, totals[2] * 1000);
}
