/* Small C kernels for validating Portcast's Valgrind tool against cachegrind and lackey.
   Build: gcc -O1 -g -fno-inline -I profiler/native/include -o native_kernels native_kernels.c -lm */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "portcast.h"

__attribute__((noinline)) double k_saxpy(int n, double a, const double* x, double* y)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        PORTCAST_THREAD(i);
        y[i] = a * x[i] + y[i];
        s += y[i];
    }
    PORTCAST_THREAD(-1);
    return s;
}

__attribute__((noinline)) void k_histogram(int n, const int* keys, int* hist, int bins)
{
    for (int i = 0; i < n; i++) hist[keys[i] % bins] += 1;
}

__attribute__((noinline)) long k_branchy(int n, const int* v)
{
    long s = 0;
    for (int i = 0; i < n; i++) {
        if (v[i] & 1) s += v[i];
        else if (v[i] % 3 == 0) s -= v[i] / 3;
        else s ^= v[i];
    }
    return s;
}

__attribute__((noinline)) double k_special(int n, const double* x)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += sqrt(x[i] + 1.0) / (x[i] + 2.0);
    return s;
}

__attribute__((noinline)) float k_special_f(int n, const float* x)
{
    float s = 0;
    for (int i = 0; i < n; i++) s += sqrtf(x[i] + 1.0f) / (x[i] + 2.0f) * 0.5f;
    return s;
}

__attribute__((noinline)) void k_matmul(int n, const double* a, const double* b, double* c)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}

int main(int argc, char** argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int m = 24;
    double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
    int *keys = malloc(n * sizeof(int)), hist[16] = {0};
    double *a = malloc(m * m * sizeof(double)), *b = malloc(m * m * sizeof(double)), *c = malloc(m * m * sizeof(double));
    float* xf = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) { x[i] = i; y[i] = 1; keys[i] = (i * 7919) % 1000; xf[i] = (float)i; }
    for (int i = 0; i < m * m; i++) { a[i] = i % 7; b[i] = i % 5; }
    PORTCAST_REGION_START("saxpy");
    double s1 = k_saxpy(n, 2.0, x, y);
    PORTCAST_REGION_END("saxpy");
    PORTCAST_REGION_START("histogram");
    k_histogram(n, keys, hist, 16);
    PORTCAST_REGION_END("histogram");
    PORTCAST_REGION_START("branchy");
    long s2 = k_branchy(n, keys);
    PORTCAST_REGION_END("branchy");
    PORTCAST_REGION_START("special");
    double s3 = k_special(n, x);
    PORTCAST_REGION_END("special");
    PORTCAST_REGION_START("special_f");
    float s4 = k_special_f(n, xf);
    PORTCAST_REGION_END("special_f");
    PORTCAST_REGION_START("matmul");
    k_matmul(m, a, b, c);
    PORTCAST_REGION_END("matmul");
    printf("%.1f %d %ld %.6f %.1f %.3f\n", s1, hist[3], s2, s3, c[m * m - 1], (double)s4);
    return 0;
}
