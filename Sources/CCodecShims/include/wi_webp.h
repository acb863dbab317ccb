#ifndef WI_WEBP_H
#define WI_WEBP_H
// webp helpers owned by the webp coder (see CCodecShims.h).
#endif
