// Opaque RGBA -> YUV 4:2:0 (BT.601 studio swing), three ways, on a real photo's pixels:
//   ours    wi_webp_rgba_to_yuv420 (Sources/C/CCodecShims/wi_webp.c, included as it is: SSE2)
//   libyuv  ABGRToI420 (libyuv's "ABGR" is R, G, B, A in memory), as linked for AVIF
//   libwebp WebPPictureImportRGBA with use_argb = 0: the encoder's own conversion, the path
//           ours replaced for opaque pixels (chroma averaged through gamma tables)
// It prints, per size, (1) how far each plane is from ours and from an exact floating-point
// BT.601 conversion (chroma from each 2 x 2 block's mean), (2) the best and median time of a
// conversion into planes already allocated (ours, libyuv), and of a whole import (opaque check,
// WebPPictureAlloc, conversion: ours, the same with libyuv, libwebp's), alternating the sides
// each round so that a busy machine slows all alike.
//
//   make bench-yuv [PHOTO=photo.jpg] [ROUNDS=30]   (or: bash Benchmarks/rgba-to-yuv/run.sh [photo] [rounds])
//
// The photo is a JPEG (libturbojpeg) or a PNG (libpng's simplified API), converted to RGBA, alpha
// forced to 255; the sizes are crops of its centre, or tiles of it when it is smaller.

#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <webp/encode.h>
#include <libyuv/convert.h>
#include <libyuv/version.h>
#include <webp/decode.h>
// The file itself, so that its static opaque check serves the libyuv import too.
#include "../../Sources/C/CCodecShims/wi_webp.c"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare_doubles(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    int width, height, yStride, uvStride;
    uint8_t *y, *u, *v;
} Planes;

static Planes planes_new(int width, int height) {
    Planes p = {width, height, width, (width + 1) / 2, NULL, NULL, NULL};
    p.y = malloc((size_t)width * height);
    p.u = malloc((size_t)p.uvStride * ((height + 1) / 2));
    p.v = malloc((size_t)p.uvStride * ((height + 1) / 2));
    if (!p.y || !p.u || !p.v) { fprintf(stderr, "out of memory\n"); exit(1); }
    return p;
}

static void planes_free(Planes *p) { free(p->y); free(p->u); free(p->v); }

static Planes planes_of_picture(const WebPPicture *picture) {
    Planes p = {picture->width, picture->height, picture->y_stride, picture->uv_stride,
                picture->y, picture->u, picture->v};
    return p;
}

static void convert_ours(const uint8_t *rgba, int width, int height, Planes *p) {
    wi_webp_rgba_to_yuv420(rgba, (size_t)width * 4, width, height, p->y, p->yStride, p->u, p->v, p->uvStride);
}

static void convert_libyuv(const uint8_t *rgba, int width, int height, Planes *p) {
    if (ABGRToI420(rgba, width * 4, p->y, p->yStride, p->u, p->uvStride, p->v, p->uvStride, width, height) != 0) {
        fprintf(stderr, "ABGRToI420 failed\n");
        exit(1);
    }
}

// The exact conversion the three approximate: BT.601 studio swing in doubles.
static void convert_exact(const uint8_t *rgba, int width, int height, Planes *p) {
    for (int row = 0; row < height; row++) {
        for (int x = 0; x < width; x++) {
            const uint8_t *px = rgba + ((size_t)row * width + x) * 4;
            const double value = 16 + (65.481 * px[0] + 128.553 * px[1] + 24.966 * px[2]) / 255;
            p->y[(size_t)row * p->yStride + x] = (uint8_t)fmin(255, fmax(0, floor(value + 0.5)));
        }
    }
    for (int row = 0; 2 * row < height; row++) {
        for (int b = 0; 2 * b < width; b++) {
            double r = 0, g = 0, bl = 0;
            for (int dy = 0; dy < 2; dy++) {
                for (int dx = 0; dx < 2; dx++) {
                    const int px = 2 * b + dx < width ? 2 * b + dx : width - 1;
                    const int py = 2 * row + dy < height ? 2 * row + dy : height - 1;
                    const uint8_t *s = rgba + ((size_t)py * width + px) * 4;
                    r += s[0] / 4.0; g += s[1] / 4.0; bl += s[2] / 4.0;
                }
            }
            const double u = 128 + (-37.797 * r - 74.203 * g + 112.0 * bl) / 255;
            const double v = 128 + (112.0 * r - 93.786 * g - 18.214 * bl) / 255;
            p->u[(size_t)row * p->uvStride + b] = (uint8_t)fmin(255, fmax(0, floor(u + 0.5)));
            p->v[(size_t)row * p->uvStride + b] = (uint8_t)fmin(255, fmax(0, floor(v + 0.5)));
        }
    }
}

// Max and mean absolute difference of one plane, the mean signed difference (a bias), and the
// share of bytes that differ.
static void plane_diff(const uint8_t *a, int aStride, const uint8_t *b, int bStride, int width, int height,
                       char *out, size_t outSize) {
    int max = 0;
    uint64_t sum = 0, differing = 0;
    int64_t signedSum = 0;
    for (int row = 0; row < height; row++) {
        for (int x = 0; x < width; x++) {
            const int signedDifference = (int)a[(size_t)row * aStride + x] - (int)b[(size_t)row * bStride + x];
            const int d = abs(signedDifference);
            signedSum += signedDifference;
            if (d > max) max = d;
            sum += (uint64_t)d;
            differing += d != 0;
        }
    }
    const double n = (double)width * height;
    if (max == 0) snprintf(out, outSize, "identical");
    else snprintf(out, outSize, "max %d mean %.3f bias %+.3f (%.0f%%)", max, sum / n, signedSum / n, 100.0 * differing / n);
}

static void report_diff(const char *name, const Planes *a, const Planes *b) {
    const int cw = (a->width + 1) / 2, ch = (a->height + 1) / 2;
    char y[64], u[64], v[64];
    plane_diff(a->y, a->yStride, b->y, b->yStride, a->width, a->height, y, sizeof y);
    plane_diff(a->u, a->uvStride, b->u, b->uvStride, cw, ch, u, sizeof u);
    plane_diff(a->v, a->uvStride, b->v, b->uvStride, cw, ch, v, sizeof v);
    printf("  %-24s Y %-35s U %-35s V %s\n", name, y, u, v);
}

// The three imports, as the encoder makes them (the picture freed after each).
static int import_ours(const uint8_t *rgba, int width, int height) {
    WebPPicture picture;
    if (!WebPPictureInit(&picture)) return 0;
    picture.width = width; picture.height = height;
    const int ok = wi_webp_import_opaque_rgba(&picture, rgba, (size_t)width * 4) == 1;
    WebPPictureFree(&picture);
    return ok;
}

// What wi_webp_import_opaque_rgba would be with libyuv doing the conversion (the opaque check
// is wi_webp.c's in both: libyuv has none).
static int import_libyuv(const uint8_t *rgba, int width, int height) {
    WebPPicture picture;
    if (!WebPPictureInit(&picture)) return 0;
    if (!wi_rgba_is_opaque(rgba, (size_t)width * 4, width, height)) return 0;
    picture.width = width; picture.height = height;
    picture.use_argb = 0;
    picture.colorspace = WEBP_YUV420;
    int ok = WebPPictureAlloc(&picture);
    if (ok) {
        Planes p = planes_of_picture(&picture);
        convert_libyuv(rgba, width, height, &p);
    }
    WebPPictureFree(&picture);
    return ok;
}

static int import_libwebp(const uint8_t *rgba, int width, int height) {
    WebPPicture picture;
    if (!WebPPictureInit(&picture)) return 0;
    picture.width = width; picture.height = height;
    picture.use_argb = 0;
    const int ok = WebPPictureImportRGBA(&picture, rgba, width * 4);
    WebPPictureFree(&picture);
    return ok;
}

// What the difference does to an encode: each import encoded as WebPEncoder encodes (the
// default preset at quality 80, method 4, one thread), decoded by libwebp, the PSNR of its
// R, G and B against the source, and the file's size.
static void encode_report(const char *name, int (*import)(WebPPicture *, const uint8_t *, int, int),
                          const uint8_t *rgba, int width, int height) {
    WebPConfig config;
    WebPPicture picture;
    WebPMemoryWriter writer;
    if (!WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, 80) || !WebPPictureInit(&picture)) exit(1);
    config.method = 4;
    config.thread_level = 0;
    picture.width = width; picture.height = height; picture.use_argb = 0;
    if (!import(&picture, rgba, width, height)) { fprintf(stderr, "import failed\n"); exit(1); }
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    if (!WebPEncode(&config, &picture)) { fprintf(stderr, "WebPEncode failed: %d\n", picture.error_code); exit(1); }
    int decodedWidth = 0, decodedHeight = 0;
    uint8_t *decoded = WebPDecodeRGBA(writer.mem, writer.size, &decodedWidth, &decodedHeight);
    if (!decoded || decodedWidth != width || decodedHeight != height) { fprintf(stderr, "decode failed\n"); exit(1); }
    double squares = 0;
    for (size_t i = 0; i < (size_t)width * height * 4; i++) {
        if (i % 4 == 3) continue;
        const double d = (double)decoded[i] - rgba[i];
        squares += d * d;
    }
    const double psnr = 10 * log10(255.0 * 255.0 / (squares / ((double)width * height * 3)));
    printf("  %-24s %8zu bytes   PSNR %.3f dB\n", name, writer.size, psnr);
    WebPFree(decoded);
    WebPMemoryWriterClear(&writer);
    WebPPictureFree(&picture);
}

static int picture_ours(WebPPicture *picture, const uint8_t *rgba, int width, int height) {
    (void)width; (void)height;
    return wi_webp_import_opaque_rgba(picture, rgba, (size_t)picture->width * 4) == 1;
}

static int picture_libyuv(WebPPicture *picture, const uint8_t *rgba, int width, int height) {
    picture->colorspace = WEBP_YUV420;
    if (!WebPPictureAlloc(picture)) return 0;
    Planes p = planes_of_picture(picture);
    convert_libyuv(rgba, width, height, &p);
    return 1;
}

static int picture_libwebp(WebPPicture *picture, const uint8_t *rgba, int width, int height) {
    (void)height;
    return WebPPictureImportRGBA(picture, rgba, width * 4);
}

enum { SIDES = 5 };
static const char *const sideNames[SIDES] = {
    "convert: ours (SSE2)", "convert: libyuv",
    "import: ours", "import: check + libyuv", "import: libwebp's own",
};

static void time_size(const uint8_t *rgba, int width, int height, int rounds) {
    Planes p = planes_new(width, height);
    double *times[SIDES];
    for (int s = 0; s < SIDES; s++) times[s] = malloc(sizeof(double) * rounds);
    // A warm-up of each (libyuv picks its CPU's row functions on its first call).
    convert_ours(rgba, width, height, &p);
    convert_libyuv(rgba, width, height, &p);
    import_ours(rgba, width, height); import_libyuv(rgba, width, height); import_libwebp(rgba, width, height);
    for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < SIDES; k++) {
            // The order rotates every round.
            const int s = (k + round) % SIDES;
            const double start = now_ms();
            switch (s) {
            case 0: convert_ours(rgba, width, height, &p); break;
            case 1: convert_libyuv(rgba, width, height, &p); break;
            case 2: if (!import_ours(rgba, width, height)) { fprintf(stderr, "import failed\n"); exit(1); } break;
            case 3: if (!import_libyuv(rgba, width, height)) { fprintf(stderr, "import failed\n"); exit(1); } break;
            case 4: if (!import_libwebp(rgba, width, height)) { fprintf(stderr, "import failed\n"); exit(1); } break;
            }
            times[s][round] = now_ms() - start;
        }
    }
    for (int s = 0; s < SIDES; s++) {
        qsort(times[s], rounds, sizeof(double), compare_doubles);
        printf("  %-24s best %8.3f ms   median %8.3f ms\n", sideNames[s], times[s][0], times[s][rounds / 2]);
        free(times[s]);
    }
    planes_free(&p);
}

static void compare_size(const uint8_t *rgba, int width, int height) {
    Planes ours = planes_new(width, height), yuv = planes_new(width, height), exact = planes_new(width, height);
    convert_ours(rgba, width, height, &ours);
    convert_libyuv(rgba, width, height, &yuv);
    convert_exact(rgba, width, height, &exact);
    WebPPicture picture;
    WebPPictureInit(&picture);
    picture.width = width; picture.height = height; picture.use_argb = 0;
    if (!WebPPictureImportRGBA(&picture, rgba, width * 4)) { fprintf(stderr, "WebPPictureImportRGBA failed\n"); exit(1); }
    const Planes webp = planes_of_picture(&picture);
    report_diff("libyuv vs ours", &yuv, &ours);
    report_diff("libwebp vs ours", &webp, &ours);
    report_diff("libyuv vs libwebp", &yuv, &webp);
    report_diff("ours vs exact BT.601", &ours, &exact);
    report_diff("libyuv vs exact BT.601", &yuv, &exact);
    report_diff("libwebp vs exact BT.601", &webp, &exact);
    WebPPictureFree(&picture);
    planes_free(&ours); planes_free(&yuv); planes_free(&exact);
}

// The photo's pixels at width x height: its centre, or tiles of it on a side where it is smaller.
static uint8_t *crop(const uint8_t *photo, int photoWidth, int photoHeight, int width, int height) {
    uint8_t *out = malloc((size_t)width * height * 4);
    if (!out) { fprintf(stderr, "out of memory\n"); exit(1); }
    const int left = width < photoWidth ? (photoWidth - width) / 2 : 0;
    const int top = height < photoHeight ? (photoHeight - height) / 2 : 0;
    for (int row = 0; row < height; row++) {
        for (int x = 0; x < width; x++) {
            memcpy(out + ((size_t)row * width + x) * 4,
                   photo + ((size_t)((top + row) % photoHeight) * photoWidth + (left + x) % photoWidth) * 4, 4);
        }
    }
    return out;
}

// The photo as RGBA, or NULL (the reason printed).
static uint8_t *load_photo(const char *path, int *width, int *height) {
    FILE *file = fopen(path, "rb");
    if (!file) { perror(path); return NULL; }
    fseek(file, 0, SEEK_END);
    const long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    uint8_t *bytes = malloc(size > 0 ? (size_t)size : 1);
    if (!bytes || size < 4 || fread(bytes, 1, (size_t)size, file) != (size_t)size) {
        fprintf(stderr, "%s: cannot read\n", path);
        fclose(file);
        return NULL;
    }
    fclose(file);
    uint8_t *pixels = NULL;
    if (bytes[0] == 0xff && bytes[1] == 0xd8) {
        tjhandle handle = tjInitDecompress();
        int subsampling = 0, colorspace = 0;
        if (tjDecompressHeader3(handle, bytes, (unsigned long)size, width, height, &subsampling, &colorspace) == 0 &&
            (pixels = malloc((size_t)*width * *height * 4)) != NULL &&
            tjDecompress2(handle, bytes, (unsigned long)size, pixels, *width, 0, *height, TJPF_RGBA, TJFLAG_ACCURATEDCT) != 0) {
            free(pixels);
            pixels = NULL;
        }
        if (!pixels) fprintf(stderr, "%s: %s\n", path, tjGetErrorStr2(handle));
        tjDestroy(handle);
    } else {
        png_image image;
        memset(&image, 0, sizeof image);
        image.version = PNG_IMAGE_VERSION;
        if (png_image_begin_read_from_memory(&image, bytes, (size_t)size)) {
            image.format = PNG_FORMAT_RGBA;
            pixels = malloc(PNG_IMAGE_SIZE(image));
            if (pixels && !png_image_finish_read(&image, NULL, pixels, 0, NULL)) {
                free(pixels);
                pixels = NULL;
            }
        }
        if (!pixels) fprintf(stderr, "%s: %s\n", path, image.message);
        *width = (int)image.width;
        *height = (int)image.height;
    }
    free(bytes);
    if (!pixels) return NULL;
    // Opaque, as the path being compared requires.
    for (size_t i = 3; i < (size_t)*width * *height * 4; i += 4) pixels[i] = 255;
    return pixels;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "../shared/corpus/photos/LadyBird.jpg";
    const int rounds = argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : 30;
    int photoWidth = 0, photoHeight = 0;
    uint8_t *photo = load_photo(path, &photoWidth, &photoHeight);
    if (!photo) return 1;
    printf("RGBA -> YUV 4:2:0, BT.601 studio swing: %s (%dx%d), %d rounds; libyuv %d, libwebp %d.%d.%d\n",
           path, photoWidth, photoHeight, rounds, LIBYUV_VERSION,
           WebPGetEncoderVersion() >> 16, (WebPGetEncoderVersion() >> 8) & 255, WebPGetEncoderVersion() & 255);
    const int sizes[][2] = {{512, 512}, {2048, 1536}, {2560, 1600}, {1001, 667}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const int width = sizes[i][0], height = sizes[i][1];
        uint8_t *rgba = crop(photo, photoWidth, photoHeight, width, height);
        printf("\n%d x %d\n", width, height);
        compare_size(rgba, width, height);
        encode_report("encoded: ours", picture_ours, rgba, width, height);
        encode_report("encoded: libyuv", picture_libyuv, rgba, width, height);
        encode_report("encoded: libwebp's own", picture_libwebp, rgba, width, height);
        time_size(rgba, width, height, rounds);
        free(rgba);
    }
    free(photo);
    return 0;
}
