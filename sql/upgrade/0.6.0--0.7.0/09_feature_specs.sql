@INCLUDE ../../install/common/10_encode_values.sql@
