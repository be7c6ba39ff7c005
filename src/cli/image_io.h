/* Images for the command-line tool: PGM/PPM files (P2, P3, P5, P6), .npy arrays of uint8, float32
 * or float64, and folders of them with class labels from sub-folder names. PNG is not decoded here
 * (see the README): the Python package reads it through an image library. */
#ifndef WW_CLI_IMAGE_IO_H
#define WW_CLI_IMAGE_IO_H

#include <stddef.h>

#include "wavewarp.h"

typedef struct cli_image_set {
    size_t count;
    ww_image *images; /* pixels owned by the set */
    char **labels;    /* class names (sub-folder names, or lines of a .labels.txt file); NULL when none */
    char **names;     /* where each image came from, for messages */
} cli_image_set;

/* One image: a .pgm/.ppm/.pnm file or a .npy array (height, width) or (height, width, channels). */
int cli_read_image(const char *path, cli_image_set *out, char *err);
/* A set: a folder (its image files, and those of its sub-folders, labelled by the sub-folder's name,
 * in name order), a .npy stack (count, height, width[, channels]) whose labels, if wanted, are the
 * lines of the file named like it with .labels.txt for .npy, or one image file. With want_labels,
 * every image must have a label. */
int cli_read_image_set(const char *path, int want_labels, cli_image_set *out, char *err);
void cli_image_set_free(cli_image_set *s);

#endif
