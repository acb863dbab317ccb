// Finding #7 (docs/reliability.md), reproduced with libjpeg-turbo alone: cc -O1 libjpeg-split-repro.c -ljpeg -o repro;
// ./repro jpeg-split-differs-open 512 a.rgb; ./repro jpeg-split-differs-open 100000 b.rgb; cmp a.rgb b.rgb
// Decodes a JPEG with libjpeg-turbo's suspending source fed `chunk` bytes at a time (as an
// incremental decoder does) and prints a checksum of the pixels and the warning count.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

struct src { struct jpeg_source_mgr pub; const unsigned char *data; size_t size, given, chunk; long pending_skip; };
static void init_source(j_decompress_ptr c) {}
static boolean fill(j_decompress_ptr c) { return FALSE; } // suspend
static void skip(j_decompress_ptr c, long n) {
    struct src *s = (struct src *)c->src;
    while (n > 0 && s->pub.bytes_in_buffer > 0) { long k = n < (long)s->pub.bytes_in_buffer ? n : (long)s->pub.bytes_in_buffer; s->pub.next_input_byte += k; s->pub.bytes_in_buffer -= k; n -= k; }
    s->pending_skip += n;
}
static void term(j_decompress_ptr c) {}
// Makes `more` more bytes visible, keeping the unread ones.
static void feed(struct src *s, size_t more) {
    size_t unread_start = s->given - s->pub.bytes_in_buffer;
    s->given += more; if (s->given > s->size) s->given = s->size;
    unread_start += s->pending_skip; s->pending_skip = 0;
    if (unread_start > s->given) { s->pending_skip = unread_start - s->given; unread_start = s->given; }
    s->pub.next_input_byte = s->data + unread_start;
    s->pub.bytes_in_buffer = s->given - unread_start;
}
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb"); size_t chunk = atol(argv[2]);
    fseek(f, 0, SEEK_END); long size = ftell(f); fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(size); fread(data, 1, size, f); fclose(f);
    struct jpeg_decompress_struct c; struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e); jpeg_create_decompress(&c);
    struct src s = {0}; s.data = data; s.size = size; s.chunk = chunk;
    s.pub.init_source = init_source; s.pub.fill_input_buffer = fill; s.pub.skip_input_data = skip;
    s.pub.resync_to_restart = jpeg_resync_to_restart; s.pub.term_source = term;
    c.src = &s.pub; feed(&s, chunk);
    while (jpeg_read_header(&c, TRUE) == JPEG_SUSPENDED) feed(&s, chunk);
    c.out_color_space = JCS_RGB;
    while (!jpeg_start_decompress(&c)) feed(&s, chunk);
    size_t stride = c.output_width * 3; unsigned char *out = calloc(stride, c.output_height);
    while (c.output_scanline < c.output_height) {
        JSAMPROW row = out + stride * c.output_scanline;
        if (jpeg_read_scanlines(&c, &row, 1) == 0) { if (s.given >= s.size) break; feed(&s, chunk); }
    }
    unsigned long sum = 0; for (size_t i = 0; i < stride * c.output_height; i++) sum = sum * 31 + out[i];
    long first_diff_row = -1;
    printf("chunk %zu: %ux%u checksum %lu warnings %ld\n", chunk, c.output_width, c.output_height, sum, e.num_warnings);
    FILE *o = fopen(argv[3], "wb"); fwrite(out, 1, stride * c.output_height, o); fclose(o);
    return 0;
}
