R"x(raw \
 )" )x" /* c */ // line \
continued
#define S "a\"b" L'\x27' u8"q" 
 a ??/
