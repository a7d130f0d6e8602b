//! The image pipeline, built only from the crate's core: grey conversion, histogram and
//! equalisation, Gaussian blur, Sobel gradient and Canny edges, each agreeing with OpenCV.
