// Writes the 48×32 quadrants image (red, green / blue, white) as a HEIC whose irot/imir boxes
// say EXIF orientation argv[1] (1–8), through libheif's own encoder (HEVC by x265): heif-enc
// 1.15 has no option for it, libheif's encoding options do (`image_orientation`).
//
//   heif-orient ORIENTATION OUTPUT [EXIF_ORIENTATION [THUMBNAIL_SIDE]]
//
// EXIF_ORIENTATION (1–8; 0 for none) adds an EXIF block holding that Orientation tag beside the
// boxes, as phones write both. THUMBNAIL_SIDE (0 for none) adds a thumbnail item of that size
// whose quadrants are the inverse colours (cyan, magenta / yellow, black), so that a test can
// tell which item a decode used.
// Built and run by make-avif-heif-fixtures.py: gcc heif-orient.c -lheif.
#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(struct heif_error e) { fprintf(stderr, "%s\n", e.message); return 1; }

/// The quadrants, or their inverse, as a 48×32 RGB image; NULL on failure.
static struct heif_image* quadrants(int inverse) {
    static const unsigned char colours[4][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}};
    struct heif_image* image;
    if (heif_image_create(48, 32, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image).code) return NULL;
    if (heif_image_add_plane(image, heif_channel_interleaved, 48, 32, 8).code) return NULL;
    int stride;
    unsigned char* plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
    for (int y = 0; y < 32; y++)
        for (int x = 0; x < 48; x++)
            for (int c = 0; c < 3; c++) {
                unsigned char value = colours[(y >= 16 ? 2 : 0) + (x >= 24 ? 1 : 0)][c];
                plane[y * stride + x * 3 + c] = inverse ? 255 - value : value;
            }
    return image;
}

/// A big-endian TIFF header and one IFD with one entry: Orientation (0x0112), SHORT, 1 value.
static void exif_orientation(unsigned char tiff[26], int orientation) {
    static const unsigned char head[] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1};
    for (int i = 0; i < 18; i++) tiff[i] = head[i];
    tiff[18] = 0, tiff[19] = (unsigned char)orientation, tiff[20] = 0, tiff[21] = 0;  // the value, padded
    tiff[22] = tiff[23] = tiff[24] = tiff[25] = 0;                                      // no next IFD
}

int main(int argc, char** argv) {
    if (argc < 3 || argc > 5) return 2;
    int exif = argc > 3 ? atoi(argv[3]) : 0, thumbnail = argc > 4 ? atoi(argv[4]) : 0;
    struct heif_image* image = quadrants(0);
    if (!image) return 1;
    struct heif_context* context = heif_context_alloc();
    struct heif_encoder* encoder;
    struct heif_error e;
    if ((e = heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder)).code) return fail(e);
    heif_encoder_set_lossy_quality(encoder, 95);
    heif_encoder_set_parameter_string(encoder, "chroma", "444");
    struct heif_encoding_options* options = heif_encoding_options_alloc();
    options->image_orientation = (enum heif_orientation)atoi(argv[1]);
    struct heif_image_handle* handle;
    if ((e = heif_context_encode_image(context, image, encoder, options, &handle)).code) return fail(e);
    if (exif > 0) {
        unsigned char tiff[26];
        exif_orientation(tiff, exif);
        if ((e = heif_context_add_exif_metadata(context, handle, tiff, sizeof tiff)).code) return fail(e);
    }
    if (thumbnail > 0) {
        struct heif_image* inverse = quadrants(1);
        if (!inverse) return 1;
        if ((e = heif_context_encode_thumbnail(context, inverse, handle, encoder, NULL, thumbnail, NULL)).code) return fail(e);
    }
    if ((e = heif_context_write_to_file(context, argv[2])).code) return fail(e);
    return 0;
}
