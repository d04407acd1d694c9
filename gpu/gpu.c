/* gpu.c - backend selection and the calls that dispatch to it (to be written). */
