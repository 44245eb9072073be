# cmake -DIN=FILE -DOUT=FILE -P EmbedText.cmake: FILE's text as a C++ raw
# string literal, for an #include in an initialiser.
file(READ ${IN} text)
file(WRITE ${OUT} "R\"einc_embedded(${text})einc_embedded\"\n")
