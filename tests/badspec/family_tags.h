/* Two structs whose names have the same FNV-1a hash (low 31 bits): a
 * family API's handle types over them would share one type tag. */
typedef enum ftStatus { FT_OK = 0, FT_ERR_UNSUPPORTED = 1, FT_ERR_LOST = 2 } ftStatus;
typedef struct fam270398_st *ftOne;
typedef struct fam818116_st *ftTwo;
ftStatus ftUse(ftOne one, ftTwo two);
