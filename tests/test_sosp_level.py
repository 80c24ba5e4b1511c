"""reference.stationarity.sosp_level and is_sosp: spider_sosp Definition 1.2 (α-SOSP) as a number.

α*(x) = max(‖∇F(x)‖, max(0, −λ_min(∇²F(x)))²/ρ) is the smallest α for which x is an α-SOSP (spider_sosp Definition 1.2).

Tolerances. λ_min comes from LAPACK's symmetric eigensolver, which is backward stable: the computed eigenvalues are
exact for H + E with ‖E‖₂ ≤ p(d)·u·‖H‖₂ (u = 2^−53, p a modest polynomial; 8d is used here), so by Weyl's theorem
|λ̂ − λ| ≤ 8d·u·‖H‖₂. A diagonal matrix is already tridiagonal and diagonal, so its eigenvalues come back exactly.
Forming H = Q diag(λ) Qᵀ in float64 adds an entrywise error ≤ γ_d Σ|Q||λ||Q| ≤ 2d·u·max|λ| per entry (d ≤ 4 here).
"""

import math

import mpmath
import numpy as np
import pytest

from reference.objectives_sosp import CosineFamily
from reference.stationarity import is_sosp, sosp_level
from reference import stationarity

U = 2.0**-53  # unit roundoff of float64


def _rotation(d, rng):
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def _alpha_tolerance(curvature, eig_error, rho):
    """|α̂ − α| for the curvature term when λ_min⁻ is known to ±eig_error: ((λ + e)² − λ²)/ρ = (2λe + e²)/ρ."""
    return (2 * curvature * eig_error + eig_error**2) / rho


# ---------------------------------------------------------------------------------------------------
# Closed forms


def test_diagonal_closed_form_is_exact():
    # ‖(3, 4)‖ = 5, λ_min = −2, ρ = 1/2: the curvature term (−2)²/0.5 = 8 dominates; every number is exact in binary.
    assert sosp_level([3.0, 4.0], np.diag([-2.0, 1.0]), 0.5) == 8.0
    # With ρ = 1 the curvature term is 4 < 5: the gradient term decides.
    assert sosp_level([3.0, 4.0], np.diag([-2.0, 1.0]), 1.0) == 5.0


def test_positive_semidefinite_hessian_gives_the_gradient_norm():
    assert sosp_level([0.0, 0.0, 0.0], np.diag([0.0, 1.0, 2.0]), 1.0) == 0.0  # a minimum (λ_min = 0 allowed)
    assert sosp_level([0.0, -0.75], np.diag([3.0, 1.0]), 7.0) == 0.75


def test_boundary_point_is_an_sosp_definition_is_non_strict():
    # λ_min = −√(ρα) exactly (ρ = 1, α = 1/4, λ_min = −1/2) and ‖∇F‖ = α: both inequalities hold with equality.
    g, H = np.array([0.25, 0.0]), np.diag([-0.5, 2.0])
    assert sosp_level(g, H, 1.0) == 0.25
    assert is_sosp(g, H, 1.0, 0.25)
    assert not is_sosp(g, H, 1.0, 0.25 * (1 - 2**-40))


@pytest.mark.parametrize("d", [1, 2, 4])
def test_rotated_hessian_matches_its_spectrum(d):
    rng = np.random.default_rng(100 + d)
    for _ in range(20):
        eigenvalues = rng.uniform(-3, 3, d)
        Q = _rotation(d, rng)
        H = Q @ np.diag(eigenvalues) @ Q.T
        H = (H + H.T) / 2  # symmetric by construction; the average removes rounding asymmetry
        g = rng.standard_normal(d)
        rho = float(rng.uniform(0.1, 5))
        curvature = max(0.0, -eigenvalues.min())
        expected = max(float(np.linalg.norm(g)), curvature**2 / rho)
        eig_error = 8 * d * U * np.abs(eigenvalues).max() + 2 * d * U * np.abs(eigenvalues).max() * d
        tol = _alpha_tolerance(curvature, eig_error, rho) + 4 * U * expected
        assert abs(sosp_level(g, H, rho) - expected) <= tol


def test_cosine_family_closed_forms():
    # F(x) = φ Σ c_j s_j cos x_j: ∇F_j = −φ c_j s_j sin x_j, ∇²F = diag(−φ c_j s_j cos x_j) (diagonal:
    # exact eigenvalues).
    fam = CosineFamily([1.0, 2.0, 0.5], [1.0, -1.0, 1.0], 0.7)
    phi, rho = math.exp(-0.49 / 2), fam.hessian_lipschitz
    # the saddle x = 0: ∇F = 0, λ_min = −φ max_{s_j=+1} c_j = −φ
    assert fam.saddle_curvature() == pytest.approx(-phi, rel=4 * U)
    level = sosp_level(fam.population_gradient(np.zeros(3)), fam.population_hessian(np.zeros(3)), rho)
    assert level == pytest.approx(phi**2 / rho, rel=8 * U)
    # the minimiser (π, 0, π): ∇F is the rounding of sin(float π) ≈ 1.2e-16, the Hessian is positive definite
    x_min = fam.population_minimizer()
    level = sosp_level(fam.population_gradient(x_min), fam.population_hessian(x_min), rho)
    assert level == float(np.linalg.norm(fam.population_gradient(x_min)))
    assert level <= phi * float(np.linalg.norm(fam.c)) * abs(math.sin(math.pi))
    # random points against the closed form
    rng = np.random.default_rng(7)
    for _ in range(50):
        x = rng.uniform(-4, 4, 3)
        grad = -phi * fam.c * fam.s * np.sin(x)
        lam_min = float(np.min(-phi * fam.c * fam.s * np.cos(x)))
        expected = max(float(np.linalg.norm(grad)), max(0.0, -lam_min) ** 2 / rho)
        got = sosp_level(fam.population_gradient(x), fam.population_hessian(x), rho)
        assert got == pytest.approx(expected, rel=8 * U)


@pytest.mark.parametrize("k", [-30, -3, 0, 5, 40])
def test_scaling_by_powers_of_two_is_exact(k):
    # α*(cg, cH, cρ) = c·α*(g, H, ρ): ‖cg‖ = c‖g‖ and (cλ)²/(cρ) = c·λ²/ρ; c = 2^k makes every operation exact.
    rng = np.random.default_rng(11)
    g = rng.standard_normal(3)
    H = np.diag(rng.uniform(-2, 2, 3))
    c = 2.0**k
    assert sosp_level(c * g, c * H, c * 0.75) == c * sosp_level(g, H, 0.75)


def test_sosp_level_is_the_smallest_alpha():
    rng = np.random.default_rng(3)
    for _ in range(200):
        d = int(rng.integers(1, 5))
        g = rng.standard_normal(d) * rng.uniform(0, 2)
        H = np.diag(rng.uniform(-2, 2, d))
        rho = float(rng.uniform(0.1, 3))
        level = sosp_level(g, H, rho)
        # is_sosp(α) ⟺ α* ≤ α; at α* itself the two tests differ only by the rounding of one division and one
        # product (relative 2u), so probe just outside that band
        assert is_sosp(g, H, rho, level * (1 + 8 * U) + 1e-300)
        if level > 0:
            assert not is_sosp(g, H, rho, level * (1 - 8 * U))


def test_nearly_symmetric_hessian_from_rounding_is_accepted():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((4, 4))
    H = A.T @ np.diag([1.0, -2.0, 0.5, 3.0]) @ A  # symmetric in exact arithmetic, not always in float64
    value = sosp_level(np.zeros(4), H, 1.0)
    assert value == pytest.approx(max(0.0, -np.linalg.eigvalsh((H + H.T) / 2)[0]) ** 2, rel=1e-12)


# ---------------------------------------------------------------------------------------------------
# Hostile inputs


@pytest.mark.parametrize(
    "gradient, hessian, rho, error, name",
    [
        ([np.nan, 0.0], np.eye(2), 1.0, ValueError, "gradient"),
        ([np.inf, 0.0], np.eye(2), 1.0, ValueError, "gradient"),
        ([0.0, 0.0], [[1.0, np.nan], [np.nan, 1.0]], 1.0, ValueError, "hessian"),
        ([0.0, 0.0], [[1.0, 0.5], [0.0, 1.0]], 1.0, ValueError, "symmetric"),
        ([0.0, 0.0], np.eye(3), 1.0, ValueError, "hessian"),
        ([[0.0, 0.0]], np.eye(2), 1.0, ValueError, "gradient"),
        ([], np.zeros((0, 0)), 1.0, ValueError, "gradient"),
        ([0.0, 0.0], np.eye(2), 0.0, ValueError, "rho"),
        ([0.0, 0.0], np.eye(2), -1.0, ValueError, "rho"),
        ([0.0, 0.0], np.eye(2), np.nan, ValueError, "rho"),
        ([0.0, 0.0], np.eye(2), np.inf, ValueError, "rho"),
        ([0.0, 0.0], np.eye(2), "1", TypeError, "rho"),
        ([0.0, 0.0], np.eye(2), True, TypeError, "rho"),
        (["a", "b"], np.eye(2), 1.0, TypeError, "gradient"),
        (np.array([mpmath.mpf(0), mpmath.mpf(0)], dtype=object), np.eye(2), 1.0, TypeError, "gradient"),
    ],
)
def test_hostile_inputs_name_the_parameter(gradient, hessian, rho, error, name):
    with pytest.raises(error, match=name):
        sosp_level(gradient, hessian, rho)
    with pytest.raises(error, match=name):
        is_sosp(gradient, hessian, rho, 1.0)


@pytest.mark.parametrize("alpha, error", [(-1.0, ValueError), (np.nan, ValueError), (np.inf, ValueError),
                                          ("0.1", TypeError), (None, TypeError)])
def test_is_sosp_refuses_bad_alpha(alpha, error):
    with pytest.raises(error, match="alpha"):
        is_sosp([0.0], [[1.0]], 1.0, alpha)


def test_a_point_is_an_sosp_at_its_own_level():
    """is_sosp(g, H, ρ, sosp_level(g, H, ρ)) holds (testing λ_min⁻² ≤ ρα instead rounds differently from λ_min⁻²/ρ:
    this point was refused that way), in the reference and its fast twin, and a level one ulp lower is refused."""
    from reference.fast import stationarity as fast

    g, H, rho = np.array([0.00035151007009301974]), np.array([[-1.330389346973227]]), 6.157697263697726
    rng = np.random.default_rng(20261126)
    cases = [(g, H, rho)]
    for _ in range(500):
        d = int(rng.integers(1, 5))
        a = rng.normal(size=(d, d))
        cases.append((rng.normal(size=d) * 1e-3, (a + a.T) / 2, float(rng.uniform(0.1, 10))))
    for g, H, rho in cases:
        for module in (stationarity, fast):
            level = module.sosp_level(g, H, rho)
            assert module.is_sosp(g, H, rho, level)
            assert not module.is_sosp(g, H, rho, np.nextafter(level, 0.0))
