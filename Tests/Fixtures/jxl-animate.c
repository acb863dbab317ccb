// Writes jxl-loops.jxl: three 16×16 lossless frames (red, green, blue) of 3, 6 and 1 ticks of a
// 30000/1001 Hz clock (NTSC's), played 3 times, through libjxl's own encoder: cjxl 0.7 takes
// the clock and the loop count of no input format (it writes 0, forever, for APNG and GIF).
// Built and run by make-jxl-fixtures.py: gcc jxl-animate.c -ljxl.
#include <jxl/encode.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    JxlEncoder* encoder = JxlEncoderCreate(NULL);
    JxlBasicInfo info;
    JxlEncoderInitBasicInfo(&info);
    info.xsize = 16;
    info.ysize = 16;
    info.bits_per_sample = 8;
    info.uses_original_profile = JXL_TRUE;
    info.have_animation = JXL_TRUE;
    info.animation.tps_numerator = 30000;
    info.animation.tps_denominator = 1001;
    info.animation.num_loops = 3;
    if (JxlEncoderSetBasicInfo(encoder, &info) != JXL_ENC_SUCCESS) return 1;
    JxlColorEncoding colour;
    JxlColorEncodingSetToSRGB(&colour, JXL_FALSE);
    if (JxlEncoderSetColorEncoding(encoder, &colour) != JXL_ENC_SUCCESS) return 1;
    JxlEncoderFrameSettings* settings = JxlEncoderFrameSettingsCreate(encoder, NULL);
    JxlEncoderSetFrameLossless(settings, JXL_TRUE);
    static const unsigned char colours[3][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}};
    static const unsigned ticks[3] = {3, 6, 1};
    JxlPixelFormat format = {3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    unsigned char pixels[16 * 16 * 3];
    for (int frame = 0; frame < 3; frame++) {
        for (int i = 0; i < 16 * 16 * 3; i++) pixels[i] = colours[frame][i % 3];
        JxlFrameHeader header;
        JxlEncoderInitFrameHeader(&header);
        header.duration = ticks[frame];
        if (JxlEncoderSetFrameHeader(settings, &header) != JXL_ENC_SUCCESS) return 1;
        if (JxlEncoderAddImageFrame(settings, &format, pixels, sizeof pixels) != JXL_ENC_SUCCESS) return 1;
    }
    JxlEncoderCloseInput(encoder);
    unsigned char output[4096];
    unsigned char* next = output;
    size_t available = sizeof output;
    if (JxlEncoderProcessOutput(encoder, &next, &available) != JXL_ENC_SUCCESS) return 1;
    FILE* file = fopen(argv[1], "wb");
    if (!file || fwrite(output, 1, (size_t)(next - output), file) != (size_t)(next - output)) return 1;
    fclose(file);
    JxlEncoderDestroy(encoder);
    return 0;
}
