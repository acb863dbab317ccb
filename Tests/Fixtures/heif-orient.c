// Writes the 48×32 quadrants image (red, green / blue, white) as a HEIC whose irot/imir boxes
// say EXIF orientation argv[1] (1–8), through libheif's own encoder (HEVC by x265): heif-enc
// 1.15 has no option for it, libheif's encoding options do (`image_orientation`).
// Built and run by make-avif-heif-fixtures.py: gcc heif-orient.c -lheif.
#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(struct heif_error e) { fprintf(stderr, "%s\n", e.message); return 1; }

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    static const unsigned char colours[4][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}};
    struct heif_image* image;
    struct heif_error e = heif_image_create(48, 32, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image);
    if (e.code) return fail(e);
    if ((e = heif_image_add_plane(image, heif_channel_interleaved, 48, 32, 8)).code) return fail(e);
    int stride;
    unsigned char* plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
    for (int y = 0; y < 32; y++)
        for (int x = 0; x < 48; x++)
            for (int c = 0; c < 3; c++) plane[y * stride + x * 3 + c] = colours[(y >= 16 ? 2 : 0) + (x >= 24 ? 1 : 0)][c];
    struct heif_context* context = heif_context_alloc();
    struct heif_encoder* encoder;
    if ((e = heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder)).code) return fail(e);
    heif_encoder_set_lossy_quality(encoder, 95);
    heif_encoder_set_parameter_string(encoder, "chroma", "444");
    struct heif_encoding_options* options = heif_encoding_options_alloc();
    options->image_orientation = (enum heif_orientation)atoi(argv[1]);
    if ((e = heif_context_encode_image(context, image, encoder, options, NULL)).code) return fail(e);
    if ((e = heif_context_write_to_file(context, argv[2])).code) return fail(e);
    return 0;
}
