#ifndef WI_JPEG_H
#define WI_JPEG_H
// jpeg helpers owned by the jpeg coder (see CCodecShims.h).
#endif
