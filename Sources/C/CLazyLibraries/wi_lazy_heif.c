// libheif 1.15 (Debian 12), loaded when first used: see include/wi_lazy_libraries.h. Every libheif
// function the Swift code in Sources/WebImageCodecs calls is defined here, hidden, under its own
// name and with its header's prototype, and forwards to the library's function.
#include "wi_lazy_libraries.h"
#include "wi_lazy_load.h"

// LIBHEIF_API is empty outside Windows and builds of the library itself: the definitions below
// stay hidden.
#include <libheif/heif.h>

enum { WI_HEIF, WI_HEIF_LIBRARIES };

/// The soname (Debian's libheif1).
static const char *const wi_heif_sonames[WI_HEIF_LIBRARIES] = {
    [WI_HEIF] = "libheif.so.1",
};

/// Every function forwarded.
#define WI_HEIF_FUNCTIONS(X)                                 \
    X(WI_HEIF, heif_context_alloc)                           \
    X(WI_HEIF, heif_context_free)                            \
    X(WI_HEIF, heif_context_get_primary_image_handle)        \
    X(WI_HEIF, heif_context_read_from_memory_without_copy)   \
    X(WI_HEIF, heif_context_set_maximum_image_size_limit)    \
    X(WI_HEIF, heif_decode_image)                            \
    X(WI_HEIF, heif_decoding_options_alloc)                  \
    X(WI_HEIF, heif_decoding_options_free)                   \
    X(WI_HEIF, heif_get_version)                             \
    X(WI_HEIF, heif_image_get_bits_per_pixel_range)          \
    X(WI_HEIF, heif_image_get_height)                        \
    X(WI_HEIF, heif_image_get_plane_readonly)                \
    X(WI_HEIF, heif_image_get_width)                         \
    X(WI_HEIF, heif_image_handle_get_height)                 \
    X(WI_HEIF, heif_image_handle_get_list_of_thumbnail_IDs)  \
    X(WI_HEIF, heif_image_handle_get_luma_bits_per_pixel)    \
    X(WI_HEIF, heif_image_handle_get_nclx_color_profile)     \
    X(WI_HEIF, heif_image_handle_get_number_of_thumbnails)   \
    X(WI_HEIF, heif_image_handle_get_raw_color_profile)      \
    X(WI_HEIF, heif_image_handle_get_raw_color_profile_size) \
    X(WI_HEIF, heif_image_handle_get_thumbnail)              \
    X(WI_HEIF, heif_image_handle_get_width)                  \
    X(WI_HEIF, heif_image_handle_has_alpha_channel)          \
    X(WI_HEIF, heif_image_handle_release)                    \
    X(WI_HEIF, heif_image_release)                           \
    X(WI_HEIF, heif_nclx_color_profile_free)

WI_LAZY_DEFINE(heif, "libheif", wi_heif_sonames, WI_HEIF_FUNCTIONS)

WI_HIDDEN struct heif_context *heif_context_alloc(void) {
    return WI_LAZY(heif_context_alloc)();
}

WI_HIDDEN void heif_context_free(struct heif_context *context) {
    WI_LAZY(heif_context_free)(context);
}

WI_HIDDEN struct heif_error heif_context_get_primary_image_handle(struct heif_context *ctx,
                                                                  struct heif_image_handle **handle) {
    return WI_LAZY(heif_context_get_primary_image_handle)(ctx, handle);
}

WI_HIDDEN struct heif_error heif_context_read_from_memory_without_copy(struct heif_context *context,
                                                                       const void *mem, size_t size,
                                                                       const struct heif_reading_options *reading_options) {
    return WI_LAZY(heif_context_read_from_memory_without_copy)(context, mem, size, reading_options);
}

WI_HIDDEN void heif_context_set_maximum_image_size_limit(struct heif_context *ctx,
                                                         int maximum_width) {
    WI_LAZY(heif_context_set_maximum_image_size_limit)(ctx, maximum_width);
}

WI_HIDDEN struct heif_error heif_decode_image(const struct heif_image_handle *in_handle,
                                              struct heif_image **out_img,
                                              enum heif_colorspace colorspace,
                                              enum heif_chroma chroma,
                                              const struct heif_decoding_options *options) {
    return WI_LAZY(heif_decode_image)(in_handle, out_img, colorspace, chroma, options);
}

WI_HIDDEN struct heif_decoding_options *heif_decoding_options_alloc(void) {
    return WI_LAZY(heif_decoding_options_alloc)();
}

WI_HIDDEN void heif_decoding_options_free(struct heif_decoding_options *options) {
    WI_LAZY(heif_decoding_options_free)(options);
}

WI_HIDDEN const char *heif_get_version(void) {
    return WI_LAZY(heif_get_version)();
}

WI_HIDDEN int heif_image_get_bits_per_pixel_range(const struct heif_image *image,
                                                  enum heif_channel channel) {
    return WI_LAZY(heif_image_get_bits_per_pixel_range)(image, channel);
}

WI_HIDDEN int heif_image_get_height(const struct heif_image *image, enum heif_channel channel) {
    return WI_LAZY(heif_image_get_height)(image, channel);
}

WI_HIDDEN const uint8_t *heif_image_get_plane_readonly(const struct heif_image *image,
                                                       enum heif_channel channel, int *out_stride) {
    return WI_LAZY(heif_image_get_plane_readonly)(image, channel, out_stride);
}

WI_HIDDEN int heif_image_get_width(const struct heif_image *image, enum heif_channel channel) {
    return WI_LAZY(heif_image_get_width)(image, channel);
}

WI_HIDDEN int heif_image_handle_get_height(const struct heif_image_handle *handle) {
    return WI_LAZY(heif_image_handle_get_height)(handle);
}

WI_HIDDEN int heif_image_handle_get_list_of_thumbnail_IDs(const struct heif_image_handle *handle,
                                                          heif_item_id *ids, int count) {
    return WI_LAZY(heif_image_handle_get_list_of_thumbnail_IDs)(handle, ids, count);
}

WI_HIDDEN int heif_image_handle_get_luma_bits_per_pixel(const struct heif_image_handle *handle) {
    return WI_LAZY(heif_image_handle_get_luma_bits_per_pixel)(handle);
}

WI_HIDDEN struct heif_error heif_image_handle_get_nclx_color_profile(const struct heif_image_handle *handle,
                                                                     struct heif_color_profile_nclx **out_data) {
    return WI_LAZY(heif_image_handle_get_nclx_color_profile)(handle, out_data);
}

WI_HIDDEN int heif_image_handle_get_number_of_thumbnails(const struct heif_image_handle *handle) {
    return WI_LAZY(heif_image_handle_get_number_of_thumbnails)(handle);
}

WI_HIDDEN struct heif_error heif_image_handle_get_raw_color_profile(const struct heif_image_handle *handle,
                                                                    void *out_data) {
    return WI_LAZY(heif_image_handle_get_raw_color_profile)(handle, out_data);
}

WI_HIDDEN size_t heif_image_handle_get_raw_color_profile_size(const struct heif_image_handle *handle) {
    return WI_LAZY(heif_image_handle_get_raw_color_profile_size)(handle);
}

WI_HIDDEN struct heif_error heif_image_handle_get_thumbnail(const struct heif_image_handle *main_image_handle,
                                                            heif_item_id thumbnail_id,
                                                            struct heif_image_handle **out_thumbnail_handle) {
    return WI_LAZY(heif_image_handle_get_thumbnail)(main_image_handle, thumbnail_id,
                                                    out_thumbnail_handle);
}

WI_HIDDEN int heif_image_handle_get_width(const struct heif_image_handle *handle) {
    return WI_LAZY(heif_image_handle_get_width)(handle);
}

WI_HIDDEN int heif_image_handle_has_alpha_channel(const struct heif_image_handle *handle) {
    return WI_LAZY(heif_image_handle_has_alpha_channel)(handle);
}

WI_HIDDEN void heif_image_handle_release(const struct heif_image_handle *handle) {
    WI_LAZY(heif_image_handle_release)(handle);
}

WI_HIDDEN void heif_image_release(const struct heif_image *image) {
    WI_LAZY(heif_image_release)(image);
}

WI_HIDDEN void heif_nclx_color_profile_free(struct heif_color_profile_nclx *nclx_profile) {
    WI_LAZY(heif_nclx_color_profile_free)(nclx_profile);
}
