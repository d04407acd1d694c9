class Program_weight_tensor_meta_in_0:
	name = "in_0"
	original_name = "in_0"
	shape = [2, 8, 7, 9]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 1.0
	data = None


class Program_weight_tensor_meta_in_1:
	name = "in_1"
	original_name = "in_1"
	shape = [4, 7, 6]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.5
	std = 1.0
	data = None
