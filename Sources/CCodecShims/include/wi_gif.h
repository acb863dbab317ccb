#ifndef WI_GIF_H
#define WI_GIF_H
// gif helpers owned by the gif coder (see CCodecShims.h).
#endif
